"""Providers, models and settings over HTTP: each route, each limit and each refusal."""
from __future__ import annotations

import pytest


def assert_invalid(r, *fields, says: str | None = None):
    assert r.status == 422, r
    err = r.body["error"]
    assert err["code"] == "invalid" and err["message"].endswith(".")
    for name in fields:
        assert name in err["fields"], (name, err["fields"])
        assert err["fields"][name].endswith("."), err["fields"][name]
        if says:
            assert says in err["fields"][name], err["fields"][name]
    return err["fields"]


def make_provider(api, **fields):
    body = {"kind": "openai_compatible", "name": "Local", "base_url": "http://127.0.0.1:11434/v1", **fields}
    r = api.post("/api/providers", body)
    assert r.status == 201, r
    return r.body


def make_model(api, provider_id, **fields):
    r = api.post("/api/models", {"provider_id": provider_id, "api_model": "llama3", **fields})
    assert r.status == 201, r
    return r.body


# -- providers ------------------------------------------------------------------

def test_provider_defaults_and_shape(api):
    assert api.get("/api/providers").body == []
    p = make_provider(api, kind="openai", name="OpenAI", base_url=None)
    assert {"id", "kind", "name", "base_url", "has_key", "enabled"} <= set(p)
    assert (p["kind"], p["name"], p["base_url"], p["has_key"], p["enabled"], p["timeout"]) == \
        ("openai", "OpenAI", None, False, True, 60)
    assert api.get("/api/providers").body == [p]


@pytest.mark.parametrize("kind", ["openai", "anthropic", "openai_compatible"])
def test_each_kind_can_be_created(api, kind):
    p = make_provider(api, kind=kind, name=f"{kind} one")
    assert p["kind"] == kind and p["base_url"] == "http://127.0.0.1:11434/v1"


@pytest.mark.parametrize("body, field", [
    ({"name": "x"}, "kind"),
    ({"kind": "gemini", "name": "x"}, "kind"),
    ({"kind": "openai"}, "name"),
    ({"kind": "openai", "name": "   "}, "name"),
    ({"kind": "openai", "name": "x" * 101}, "name"),
    ({"kind": "openai", "name": 5}, "name"),
    ({"kind": "openai_compatible", "name": "x"}, "base_url"),
    ({"kind": "openai", "name": "x", "base_url": "ftp://host/v1"}, "base_url"),
    ({"kind": "openai", "name": "x", "base_url": "not a url"}, "base_url"),
    ({"kind": "openai", "name": "x", "base_url": "http://"}, "base_url"),
    ({"kind": "openai", "name": "x", "base_url": "http://host:port/v1"}, "base_url"),
    ({"kind": "openai", "name": "x", "timeout": 0}, "timeout"),
    ({"kind": "openai", "name": "x", "timeout": 601}, "timeout"),
    ({"kind": "openai", "name": "x", "timeout": "30"}, "timeout"),
    ({"kind": "openai", "name": "x", "timeout": True}, "timeout"),
    ({"kind": "openai", "name": "x", "enabled": "yes"}, "enabled"),
    ({"kind": "openai", "name": "x", "api_key": 12}, "api_key"),
    ({"kind": "openai", "name": "x", "colour": "red"}, "colour"),
    ({"kind": "openai", "name": "x", "has_key": True}, "has_key"),
])
def test_provider_refusals(api, body, field):
    assert_invalid(api.post("/api/providers", body), field)
    assert api.get("/api/providers").body == []


def test_provider_timeout_limits_are_inclusive(api):
    assert make_provider(api, timeout=1)["timeout"] == 1
    assert make_provider(api, timeout=600)["timeout"] == 600
    assert make_provider(api, timeout=2.5)["timeout"] == 2.5


def test_provider_patch(api):
    p = make_provider(api)
    r = api.patch(f"/api/providers/{p['id']}", {"name": "Ollama", "enabled": False, "timeout": 120,
                                                "base_url": "https://example.com/v1"})
    assert r.status == 200
    assert (r.body["name"], r.body["enabled"], r.body["timeout"], r.body["base_url"]) == \
        ("Ollama", False, 120, "https://example.com/v1")
    assert api.get("/api/providers").body == [r.body]
    assert_invalid(api.patch(f"/api/providers/{p['id']}", {"base_url": None}), "base_url")
    assert_invalid(api.patch(f"/api/providers/{p['id']}", {"id": "p_other"}), "id", says="read-only")
    assert_invalid(api.patch(f"/api/providers/{p['id']}", {"name": ""}), "name")
    assert api.get("/api/providers").body == [r.body]
    assert api.patch("/api/providers/p_missing", {"name": "x"}).status == 404


def test_provider_key_routes(api):
    p = make_provider(api)
    pid = p["id"]
    assert api.put(f"/api/providers/{pid}/key", {"api_key": "sk-secret-1"}).status == 204
    assert api.get("/api/providers").body[0]["has_key"] is True
    assert api.delete(f"/api/providers/{pid}/key").status == 204
    assert api.get("/api/providers").body[0]["has_key"] is False
    assert api.delete(f"/api/providers/{pid}/key").status == 204  # nothing to remove is fine
    assert_invalid(api.put(f"/api/providers/{pid}/key", {}), "api_key", says="required")
    assert_invalid(api.put(f"/api/providers/{pid}/key", {"api_key": "  "}), "api_key")
    assert_invalid(api.put(f"/api/providers/{pid}/key", {"api_key": "k", "extra": 1}), "extra")
    assert api.put("/api/providers/p_missing/key", {"api_key": "k"}).status == 404
    assert api.delete("/api/providers/p_missing/key").status == 404


def test_provider_created_with_key_and_patched_key(api):
    p = make_provider(api, api_key="sk-secret-2")
    assert p["has_key"] is True and "sk-secret-2" not in str(p)
    r = api.patch(f"/api/providers/{p['id']}", {"api_key": None})
    assert r.status == 200 and r.body["has_key"] is False
    r = api.patch(f"/api/providers/{p['id']}", {"api_key": "sk-secret-3"})
    assert r.body["has_key"] is True and "sk-secret-3" not in str(r.body)


def test_provider_delete_takes_its_models_key_and_references(api):
    keep = make_provider(api, name="Keep")
    gone = make_provider(api, name="Gone", api_key="sk-gone")
    kept_model = make_model(api, keep["id"])
    gone_model = make_model(api, gone["id"])
    api.patch(f"/api/models/{kept_model['id']}", {"fallbacks": [gone_model["id"]]})
    api.patch("/api/settings", {"default_model_id": gone_model["id"]})
    assert api.delete(f"/api/providers/{gone['id']}").status == 204
    assert [p["id"] for p in api.get("/api/providers").body] == [keep["id"]]
    models = api.get("/api/models").body
    assert [m["id"] for m in models] == [kept_model["id"]] and models[0]["fallbacks"] == []
    assert api.get("/api/settings").body["default_model_id"] is None
    assert api.delete(f"/api/providers/{gone['id']}").status == 404
    assert api.put(f"/api/providers/{gone['id']}/key", {"api_key": "k"}).status == 404


def test_discover_unreachable_provider_is_a_502_naming_it(api):
    import socket
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = make_provider(api, base_url=f"http://127.0.0.1:{port}/v1")
    r = api.post(f"/api/providers/{p['id']}/discover")
    assert r.status == 502 and r.body["error"]["code"] == "provider_error"
    assert "Local" in r.body["error"]["message"] and "could not be reached" in r.body["error"]["message"]
    assert api.post("/api/providers/p_missing/discover").status == 404


# -- models ---------------------------------------------------------------------

@pytest.mark.parametrize("kind, wire_api", [("openai", "responses"), ("anthropic", "anthropic_messages"),
                                             ("openai_compatible", "chat_completions")])
def test_model_wire_api_defaults_by_kind(api, kind, wire_api):
    p = make_provider(api, kind=kind)
    m = make_model(api, p["id"])
    assert m["wire_api"] == wire_api


def test_model_shape_and_defaults(api):
    p = make_provider(api)
    m = make_model(api, p["id"])
    assert set(m) >= {"id", "provider_id", "wire_api", "api_model", "label", "context_window",
                      "max_output_tokens", "supports", "fallbacks"}
    assert (m["provider_id"], m["api_model"], m["label"], m["context_window"], m["max_output_tokens"]) == \
        (p["id"], "llama3", "llama3", None, None)
    assert m["supports"] == {"tools": False, "vision": False, "reasoning": False}
    assert m["fallbacks"] == []
    full = make_model(api, p["id"], wire_api="responses", label="Big", context_window=128000,
                      max_output_tokens=4096, supports={"tools": True, "reasoning": True})
    assert (full["wire_api"], full["label"], full["context_window"], full["max_output_tokens"]) == \
        ("responses", "Big", 128000, 4096)
    assert full["supports"] == {"tools": True, "vision": False, "reasoning": True}
    assert api.get("/api/models").body == [m, full]


@pytest.mark.parametrize("extra, field", [
    ({"provider_id": None}, "provider_id"),
    ({"provider_id": "p_missing"}, "provider_id"),
    ({"api_model": ""}, "api_model"),
    ({"api_model": None}, "api_model"),
    ({"wire_api": "grpc"}, "wire_api"),
    ({"context_window": 0}, "context_window"),
    ({"context_window": 1.5}, "context_window"),
    ({"max_output_tokens": "big"}, "max_output_tokens"),
    ({"supports": ["tools"]}, "supports"),
    ({"supports": {"tools": "yes"}}, "supports.tools"),
    ({"supports": {"audio": True}}, "supports.audio"),
    ({"fallbacks": "m_x"}, "fallbacks"),
    ({"fallbacks": ["m_missing"]}, "fallbacks"),
    ({"label": "x" * 201}, "label"),
    ({"price": 1}, "price"),
])
def test_model_refusals(api, extra, field):
    p = make_provider(api)
    r = api.post("/api/models", {"provider_id": p["id"], "api_model": "llama3", **extra})
    assert_invalid(r, field)
    assert api.get("/api/models").body == []


def test_model_patch_fallbacks_and_delete(api):
    p = make_provider(api)
    a, b, c = (make_model(api, p["id"], api_model=name) for name in ("a", "b", "c"))
    r = api.patch(f"/api/models/{a['id']}", {"fallbacks": [b["id"], c["id"]], "label": "Alpha",
                                             "supports": {"vision": True}})
    assert r.status == 200
    assert (r.body["fallbacks"], r.body["label"], r.body["supports"]["vision"]) == ([b["id"], c["id"]], "Alpha", True)
    assert_invalid(api.patch(f"/api/models/{a['id']}", {"fallbacks": [a["id"]]}), "fallbacks")
    assert_invalid(api.patch(f"/api/models/{a['id']}", {"fallbacks": [b["id"], b["id"]]}), "fallbacks")
    assert_invalid(api.patch(f"/api/models/{a['id']}", {"fallbacks": ["m_missing"]}), "fallbacks",
                   says="m_missing")
    assert api.patch(f"/api/models/{a['id']}", {"label": None}).body["label"] == "a"
    assert api.patch("/api/models/m_missing", {"label": "x"}).status == 404
    api.patch("/api/settings", {"default_model_id": b["id"]})
    assert api.delete(f"/api/models/{b['id']}").status == 204
    assert api.delete(f"/api/models/{b['id']}").status == 404
    models = {m["id"]: m for m in api.get("/api/models").body}
    assert set(models) == {a["id"], c["id"]} and models[a["id"]]["fallbacks"] == [c["id"]]
    assert api.get("/api/settings").body["default_model_id"] is None


# -- settings -------------------------------------------------------------------

def test_settings(api):
    s = api.get("/api/settings").body
    assert s["default_model_id"] is None
    # The contract's two fields, and what the settings screen shows as the cause and the fix.
    assert set(s["keyring"]) == {"available", "reason", "cause", "fix"}
    m = make_model(api, make_provider(api)["id"])
    r = api.patch("/api/settings", {"default_model_id": m["id"]})
    assert r.status == 200 and r.body["default_model_id"] == m["id"] and "keyring" in r.body
    assert api.get("/api/settings").body["default_model_id"] == m["id"]
    assert_invalid(api.patch("/api/settings", {"default_model_id": "m_missing"}), "default_model_id")
    assert_invalid(api.patch("/api/settings", {"keyring": {"available": True}}), "keyring", says="read-only")
    assert_invalid(api.patch("/api/settings", {"theme": "dark"}), "theme")
    assert api.get("/api/settings").body["default_model_id"] == m["id"]
    assert api.patch("/api/settings", {"default_model_id": None}).body["default_model_id"] is None
    assert api.patch("/api/settings", {}).status == 200


def test_new_chat_uses_the_default_model(api):
    m = make_model(api, make_provider(api)["id"])
    assert api.post("/api/chats", {}).body["model_id"] is None
    api.patch("/api/settings", {"default_model_id": m["id"]})
    assert api.post("/api/chats", {}).body["model_id"] == m["id"]


# -- bodies ---------------------------------------------------------------------

@pytest.mark.parametrize("path, method", [("/api/providers", "POST"), ("/api/models", "POST"),
                                          ("/api/settings", "PATCH")])
def test_malformed_and_non_object_bodies(api, path, method):
    r = api.request(method, path, raw=b'{"kind": ')
    assert r.status == 400 and r.body["error"]["code"] == "bad_request"
    assert "not valid JSON" in r.body["error"]["message"]
    r = api.request(method, path, ["not", "an", "object"])
    assert r.status == 422 and "JSON object" in r.body["error"]["message"]
    assert "body" in r.body["error"]["fields"]
