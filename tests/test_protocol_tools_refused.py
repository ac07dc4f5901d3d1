"""A provider refusing tool definitions: the model is marked as taking none, in the catalog and
catalog.toml, with a note; the turn's error names the setting; the next turn sends no tools."""
from __future__ import annotations

import tomllib

import pytest

from tests.fakeprovider import script as S
from tests.test_catalog_file import catalog_path

# Ollama's answer when a model's template has no tools (HTTP 400, OpenAI-compatible error body).
OLLAMA_REFUSAL = {"error": {"message": "registry.ollama.ai/library/gemma2:2b does not support tools",
                            "type": "api_error", "param": None, "code": None}}
# OpenRouter's, when no endpoint of the model takes tools (HTTP 404).
OPENROUTER_REFUSAL = {"error": {"message": "No endpoints found that support tool use. To learn more about "
                                           "provider routing, visit: https://openrouter.ai/docs/provider-routing",
                                "code": 404}}


def tool_names(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools") or []}


@pytest.mark.parametrize("status,body", [(400, OLLAMA_REFUSAL), (404, OPENROUTER_REFUSAL)])
def test_tools_refused_marks_the_model_and_names_the_setting(setup, status, body):
    api = setup.api
    model = api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).body
    assert model["supports"]["tools"] is True and model["note"] is None
    chat = setup.chat()
    setup.fake.enqueue([S.error(status, body)])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="List my files")
    error = sock.until("error")
    assert sock.until("turn_end")["status"] == "failed"
    assert error["code"] == "tools_unsupported"
    assert "does not take tools" in error["message"] and "Fake Local" in error["message"]
    assert "Settings → Models → Fake → Tools" in error["message"]
    assert "web_fetch" in tool_names(setup.fake.requests[0])  # the request with tools was refused

    marked = next(m for m in api.get("/api/models").body if m["id"] == model["id"])
    assert marked["supports"]["tools"] is False
    assert marked["note"].startswith("Tools off: Fake Local refused tool definitions")
    entry = next(m for m in tomllib.loads(catalog_path(setup.server).read_text())["models"]
                 if m["id"] == model["id"])
    assert entry["supports"]["tools"] is False and entry["note"] == marked["note"]
    assert setup.messages(chat)[-1]["error"]["code"] == "tools_unsupported"

    # Sending again works, without tools.
    setup.fake.enqueue([S.text("Here is an answer.")])
    sock.send(type="send", request_id="r2", content="Then just answer")
    assert sock.until("turn_end")["status"] == "completed"
    assert "web_fetch" not in tool_names(setup.fake.requests[-1])  # (the test plugin's tools stay)

    # Turning tools back on clears the note that said why they were off.
    back = api.patch(f"/api/models/{model['id']}", {"supports": {"tools": True}}).body
    assert back["supports"]["tools"] is True and back["note"] is None
    sock.close()


def test_a_400_about_something_else_leaves_tools_on(setup):
    api = setup.api
    api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}})
    chat = setup.chat()
    setup.fake.enqueue([S.error(400, {"error": {"message": "temperature must be at most 2"}})])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="Hi")
    error = sock.until("error")
    assert error["code"] == "provider_error" and "Settings → Models" not in error["message"]
    model = next(m for m in api.get("/api/models").body if m["id"] == setup.model["id"])
    assert model["supports"]["tools"] is True and model["note"] is None
    sock.close()


def test_note_is_validated_and_cleared_by_null(api):
    p = api.post("/api/providers", {"kind": "openai_compatible", "name": "P",
                                    "base_url": "http://127.0.0.1:9/v1"}).body
    m = api.post("/api/models", {"provider_id": p["id"], "api_model": "x", "note": "Slow on this laptop"})
    assert m.status == 201 and m.body["note"] == "Slow on this laptop"
    too_long = api.patch(f"/api/models/{m.body['id']}", {"note": "x" * 501})
    assert too_long.status == 422 and "note" in too_long.body["error"]["fields"]
    assert api.patch(f"/api/models/{m.body['id']}", {"note": None}).body["note"] is None
