"""catalog.toml against the real server: written on first start, kept equal to the API, hand edits
applied while running, bad edits reported without losing the last good catalog."""
from __future__ import annotations

import os
import time
import tomllib

import pytest

APPLY_DEADLINE_S = 2.0  # a saved edit must be in use within 2 s


def wait_until(check, timeout: float = APPLY_DEADLINE_S, what: str = "condition"):
    """Poll `check()` until it returns something truthy (that is the event we wait for)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.02)


def catalog_path(server):
    return server.data_dir / "catalog.toml"


def save_like_editor(path, text: str) -> None:
    """What most editors do: write a temp file next to it, then rename it over the original."""
    tmp = path.with_name(path.name + ".swp~")
    tmp.write_text(text)
    os.replace(tmp, path)


def save_in_place(path, text: str) -> None:
    with open(path, "w") as f:  # truncate, then write: the other way editors save
        f.write(text)


def status(api) -> dict:
    return api.get("/api/settings").body["catalog"]


def model_labels(api) -> dict:
    return {m["id"]: m["label"] for m in api.get("/api/models").body}


GOOD = """\
version = 1

# my local server
[[providers]]
id = "local"
kind = "openai_compatible"
name = "Local"  # what the app shows
base_url = "http://127.0.0.1:11434/v1"

[[models]]
id = "llama"
provider = "local"
api_model = "llama3.1:8b"
label = "{label}"
supports = {{ tools = true }}
"""


def write_good(api, server, label="Llama", save=save_like_editor):
    save(catalog_path(server), GOOD.format(label=label))
    wait_until(lambda: model_labels(api).get("llama") == label, what=f"label {label!r} applied")


# -- start-up -----------------------------------------------------------------------

def test_first_start_writes_a_commented_example(server, api):
    text = catalog_path(server).read_text()
    for field in ("id", "kind", "name", "base_url", "enabled", "timeout", "provider", "wire_api",
                  "api_model", "label", "context_window", "max_output_tokens", "supports", "fallbacks",
                  "price_input", "price_output"):
        assert f"\n# {field} = " in text, field
    assert "# [[providers]]" in text and "# [[models]]" in text and "keyring" in text
    assert tomllib.loads(text) == {"version": 1}
    s = status(api)
    assert s["path"] == str(catalog_path(server)) and s["error"] is None and s["reloads"] == 0


def test_an_existing_file_is_loaded_at_start(start_server, tmp_path):
    data = tmp_path / "pre"
    data.mkdir()
    (data / "catalog.toml").write_text(GOOD.format(label="From file"))
    api = start_server(data_dir=data).api()
    [provider] = api.get("/api/providers").body
    assert (provider["id"], provider["kind"], provider["name"], provider["enabled"], provider["timeout"]) == \
        ("local", "openai_compatible", "Local", True, 60)
    [model] = api.get("/api/models").body
    assert (model["id"], model["provider_id"], model["wire_api"], model["label"]) == \
        ("llama", "local", "chat_completions", "From file")
    assert model["supports"] == {"tools": True, "vision": False, "reasoning": False}
    assert model["price"] == {"input": None, "output": None}


# -- API → file ---------------------------------------------------------------------

def test_api_writes_reach_the_file_and_keys_never_do(server, api):
    secret = "sk-" + "catalog-test-secret-0123456789"  # built, so no scanner mistakes it for a real key
    p = api.post("/api/providers", {"kind": "openai", "name": "OpenAI", "api_key": secret}).body
    m = api.post("/api/models", {"provider_id": p["id"], "api_model": "gpt-4o", "label": "GPT-4o",
                                 "context_window": 128000, "price": {"input": 2.5, "output": 10}}).body
    assert m["price"] == {"input": 2.5, "output": 10}
    text = catalog_path(server).read_text()
    assert secret not in text and "api_key" not in text.split("version = 1")[1]
    doc = tomllib.loads(text)
    assert doc["providers"] == [{"id": p["id"], "kind": "openai", "name": "OpenAI", "enabled": True,
                                 "timeout": 60}]
    assert doc["models"] == [{"id": m["id"], "provider": p["id"], "wire_api": "responses", "api_model": "gpt-4o",
                              "label": "GPT-4o", "context_window": 128000,
                              "supports": {"tools": False, "vision": False, "reasoning": False},
                              "fallbacks": [], "price_input": 2.5, "price_output": 10}]
    api.patch(f"/api/models/{m['id']}", {"label": "Omni", "price": None})
    doc = tomllib.loads(catalog_path(server).read_text())
    assert doc["models"][0]["label"] == "Omni" and "price_input" not in doc["models"][0]
    assert api.delete(f"/api/providers/{p['id']}").status == 204
    assert tomllib.loads(catalog_path(server).read_text()) == {"version": 1}
    assert not list(server.data_dir.glob(".catalog.toml.*"))  # no temp file left behind


def test_the_apps_own_writes_trigger_no_reload(server, api):
    p = api.post("/api/providers", {"kind": "anthropic", "name": "Claude"}).body
    # The rename makes a file event; it is seen and skipped because the content is what the app wrote.
    wait_until(lambda: status(api)["skipped"] >= 1, what="own write seen")
    before = status(api)["skipped"]
    api.post("/api/models", {"provider_id": p["id"], "api_model": "claude-sonnet-4-5"})
    wait_until(lambda: status(api)["skipped"] > before, what="second own write seen")
    s = status(api)
    assert s["reloads"] == 0 and s["error"] is None
    # A person's edit after that is one reload, not a loop.
    write_good(api, server)
    assert status(api)["reloads"] == 1


def test_comments_survive_an_api_write(server, api):
    write_good(api, server)
    assert api.patch("/api/providers/local", {"name": "Ollama", "timeout": 30}).status == 200
    r = api.post("/api/models", {"provider_id": "local", "api_model": "qwen2.5:7b"})
    assert r.status == 201
    text = catalog_path(server).read_text()
    assert "# my local server\n[[providers]]" in text
    assert 'name = "Ollama"  # what the app shows' in text and "timeout = 30" in text
    assert 'api_model = "qwen2.5:7b"' in text and "supports = { tools = true }" in text
    doc = tomllib.loads(text)
    assert [m["id"] for m in doc["models"]] == ["llama", r.body["id"]]


# -- file → API ---------------------------------------------------------------------

@pytest.mark.parametrize("save", [save_like_editor, save_in_place], ids=["rename", "in_place"])
def test_a_hand_edit_is_applied_within_two_seconds(server, api, save):
    write_good(api, server, "First", save=save)
    write_good(api, server, "Second", save=save)
    assert status(api)["reloads"] == 2 and status(api)["error"] is None
    # Changing an id by hand is a delete and a create.
    save(catalog_path(server), GOOD.format(label="Renamed").replace('id = "llama"', 'id = "llama-8b"'))
    wait_until(lambda: model_labels(api) == {"llama-8b": "Renamed"}, what="renamed model")


def test_a_removed_file_is_written_again(server, api):
    write_good(api, server)
    catalog_path(server).unlink()
    wait_until(catalog_path(server).exists, what="file written again")
    assert "llama" in model_labels(api)
    assert tomllib.loads(catalog_path(server).read_text())["models"][0]["id"] == "llama"


BAD_EDITS = {
    "syntax": (GOOD.format(label="x").replace('kind = "openai_compatible"', 'kind = "openai_compatible'),
               6, "not valid TOML"),
    "unknown_kind": (GOOD.format(label="x").replace('"openai_compatible"', '"gemini"'), 6, '"gemini"'),
    "unknown_provider": (GOOD.format(label="x").replace('provider = "local"', 'provider = "nowhere"'),
                         12, '"nowhere"'),
    "missing_field": (GOOD.format(label="x").replace('api_model = "llama3.1:8b"\n', ""), 10, "api_model"),
    "duplicate_id": (GOOD.format(label="x") + '\n[[models]]\nid = "llama"\nprovider = "local"\napi_model = "b"\n',
                     18, "used twice"),
    "unknown_fallback": (GOOD.format(label="x") + 'fallbacks = ["ghost"]\n', 16, '"ghost"'),
    "key_in_file": (GOOD.format(label="x").replace('name = "Local"', 'name = "Local"\napi_key = "abc"'),
                    8, "API key"),
}


@pytest.mark.parametrize("case", list(BAD_EDITS))
def test_an_invalid_edit_keeps_the_last_good_catalog(server, api, case):
    write_good(api, server, "Good")
    text, line, says = BAD_EDITS[case]
    before = (api.get("/api/providers").body, api.get("/api/models").body)
    save_like_editor(catalog_path(server), text)
    error = wait_until(lambda: status(api)["error"], what="error reported")
    assert error["line"] == line, error
    assert says in error["message"] and f"line {line}" in error["message"], error
    assert (api.get("/api/providers").body, api.get("/api/models").body) == before
    # The app will not overwrite the person's unfinished edit.
    r = api.patch("/api/providers/local", {"name": "Other"})
    assert r.status == 409 and r.body["error"]["code"] == "catalog_invalid", r
    assert catalog_path(server).read_text() == text
    # Fixing the file clears the error and applies the fix.
    write_good(api, server, "Fixed")
    assert status(api)["error"] is None


def test_an_empty_file_is_not_taken_as_remove_everything(server, api):
    write_good(api, server)
    save_in_place(catalog_path(server), "")
    error = wait_until(lambda: status(api)["error"], what="error reported")
    assert "empty" in error["message"] and error["line"] is None
    assert "llama" in model_labels(api)
