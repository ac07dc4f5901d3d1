"""Discovering a provider's models, suggesting local servers, prices, and shutting down with the
catalog watcher running — against the real server and the fake provider over real HTTP."""
from __future__ import annotations

import socket
import tomllib

from tests.test_catalog_file import catalog_path, save_like_editor, status, wait_until

SECRET = "sk-" + "discover-test-key-0123456789abcdef"  # built, so no scanner mistakes it for a real key


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def provider(api, **fields) -> dict:
    r = api.post("/api/providers", {"name": "Fake", **fields})
    assert r.status == 201, r
    return r.body


def discover(api, provider_id):
    return api.post(f"/api/providers/{provider_id}/discover")


# -- discover -----------------------------------------------------------------------

def test_discover_openai_compatible(server, api, fake):
    fake.models = ["llama3.1:8b", "qwen3:8b", "nomic-embed-text", "mystery-model"]
    p = provider(api, kind="openai_compatible", base_url=fake.base_url)
    r = discover(api, p["id"])
    assert r.status == 200, r
    added = {m["api_model"]: m for m in r.body["added"]}
    assert set(added) == {"llama3.1:8b", "qwen3:8b", "mystery-model"}  # embeddings are not chat models
    assert {m["wire_api"] for m in added.values()} == {"chat_completions"}
    assert {m["provider_id"] for m in added.values()} == {p["id"]}
    llama = added["llama3.1:8b"]
    assert llama["label"] == "Llama3.1 8B" and llama["context_window"] == 131072
    assert llama["supports"] == {"tools": True, "vision": False, "reasoning": False}
    assert added["qwen3:8b"]["supports"]["reasoning"] is True
    mystery = added["mystery-model"]
    assert mystery["label"] == "Mystery Model" and mystery["context_window"] is None
    # A chat model nothing describes is assumed to take tools until a call is refused.
    assert mystery["supports"] == {"tools": True, "vision": False, "reasoning": False}
    assert fake.requests[0].path == "/v1/models"
    # Listed, and written to the file.
    assert sorted(m["api_model"] for m in api.get("/api/models").body) == sorted(added)
    doc = tomllib.loads(catalog_path(server).read_text())
    assert sorted(m["api_model"] for m in doc["models"]) == sorted(added)
    # A second look adds only what is new.
    assert discover(api, p["id"]).body == {"added": []}
    fake.models.append("mistral-small")
    again = discover(api, p["id"]).body["added"]
    assert [m["api_model"] for m in again] == ["mistral-small"] and len(api.get("/api/models").body) == 4


def test_discover_openai_skips_non_chat_models_and_uses_responses(api, fake):
    fake.models = ["gpt-4o-mini", "o3-mini", "text-embedding-3-small", "whisper-1", "tts-1", "dall-e-3",
                   "omni-moderation-latest"]
    p = provider(api, kind="openai", base_url=fake.base_url, api_key=SECRET)
    added = {m["api_model"]: m for m in discover(api, p["id"]).body["added"]}
    assert set(added) == {"gpt-4o-mini", "o3-mini"}
    assert {m["wire_api"] for m in added.values()} == {"responses"}
    assert added["gpt-4o-mini"]["label"] == "GPT-4o Mini"
    assert added["o3-mini"]["supports"]["reasoning"] is True
    assert fake.requests[-1].headers["authorization"] == f"Bearer {SECRET}"


def test_discover_anthropic(api, fake):
    fake.models = ["claude-sonnet-4-5", "claude-3-5-haiku-20241022"]
    p = provider(api, kind="anthropic", base_url=fake.url, api_key=SECRET)
    r = discover(api, p["id"])
    assert r.status == 200, r
    added = {m["api_model"]: m for m in r.body["added"]}
    assert set(added) == {"claude-sonnet-4-5", "claude-3-5-haiku-20241022"}
    assert {m["wire_api"] for m in added.values()} == {"anthropic_messages"}
    assert added["claude-sonnet-4-5"]["label"] == "Claude Sonnet 4 5"  # the provider's display_name
    assert added["claude-sonnet-4-5"]["supports"] == {"tools": True, "vision": True, "reasoning": True}
    req = fake.requests[-1]
    assert req.path == "/v1/models" and "anthropic-version" in req.headers
    assert SECRET in (req.headers.get("x-api-key"), req.headers.get("authorization", "").removeprefix("Bearer "))
    assert discover(api, p["id"]).body == {"added": []}


def test_discover_with_a_refused_key_is_a_clear_502(api, fake):
    p = provider(api, kind="openai_compatible", name="My Server", base_url=fake.base_url, api_key=SECRET)
    fake.enqueue({"path": "/v1/models", "steps": [{"type": "error", "status": 401}]})
    r = discover(api, p["id"])
    assert r.status == 502, r
    err = r.body["error"]
    assert err["code"] == "provider_error"
    assert "My Server" in err["message"] and "401" in err["message"] and "key" in err["message"]
    assert SECRET not in str(r.body)
    assert api.get("/api/models").body == []


def test_discover_for_a_vendor_without_a_key_says_to_add_one(api):
    p = provider(api, kind="openai", name="OpenAI")
    r = discover(api, p["id"])
    assert r.status == 409 and r.body["error"]["code"] == "no_key" and "OpenAI" in r.body["error"]["message"]


# -- suggestions --------------------------------------------------------------------

def test_suggestions_find_the_local_servers_that_answer(start_server, fake):
    api = start_server({"NUMI_PROBE_PORTS": f"Fake Ollama={fake.port},Nothing={closed_port()}"}).api()
    r = api.post("/api/providers/suggestions")
    assert r.status == 200, r
    assert r.body == {"items": [{"kind": "openai_compatible", "name": "Fake Ollama",
                                 "base_url": f"http://127.0.0.1:{fake.port}/v1", "models": ["fake-model"]}]}
    # Once configured (localhost is the same server), it is no longer suggested.
    provider(api, kind="openai_compatible", base_url=f"http://localhost:{fake.port}/v1/")
    assert api.post("/api/providers/suggestions").body == {"items": []}
    # Probing is a network call: a GET (an <img> on another page) cannot make Numi do it.
    assert api.get("/api/providers/suggestions").status == 404


# -- prices ------------------------------------------------------------------------------

def test_model_prices(api):
    p = provider(api, kind="openai_compatible", base_url="http://127.0.0.1:9/v1")
    m = api.post("/api/models", {"provider_id": p["id"], "api_model": "x"}).body
    assert m["price"] == {"input": None, "output": None}
    r = api.patch(f"/api/models/{m['id']}", {"price": {"input": 0.15, "output": 0.6}})
    assert r.status == 200 and r.body["price"] == {"input": 0.15, "output": 0.6}
    r = api.patch(f"/api/models/{m['id']}", {"price": {"input": -1}})
    assert r.status == 422 and "price.input" in r.body["error"]["fields"]
    r = api.patch(f"/api/models/{m['id']}", {"price": {"usd": 1}})
    assert r.status == 422 and "price.usd" in r.body["error"]["fields"]
    assert api.patch(f"/api/models/{m['id']}", {"price": None}).body["price"] == {"input": None, "output": None}


def test_a_key_pasted_into_a_field_written_to_the_file_is_refused(api):
    r = api.post("/api/providers", {"kind": "openai", "name": "x", "base_url": f"https://h/v1?key={SECRET}"})
    assert r.status == 422 and "API key" in r.body["error"]["fields"]["base_url"]
    assert api.get("/api/providers").body == []


def test_catalog_is_read_only_in_settings(api):
    r = api.patch("/api/settings", {"catalog": {"error": None}})
    assert r.status == 422 and "read-only" in r.body["error"]["fields"]["catalog"]


# -- shutdown -------------------------------------------------------------------------

def test_sigterm_exits_quickly_with_the_watcher_running(start_server):
    server = start_server()
    api = server.api()
    api.post("/api/providers", {"kind": "anthropic", "name": "Claude"})
    save_like_editor(catalog_path(server), catalog_path(server).read_text().replace('"Claude"', '"Claude 2"'))
    wait_until(lambda: api.get("/api/providers").body[0]["name"] == "Claude 2", what="edit applied")
    assert status(api)["reloads"] == 1
    assert server.terminate(timeout=10) < 10
    assert server.proc.returncode == 0
    assert not (server.data_dir / "server.json").exists()
