"""Request bodies are read strictly: what Numi could not keep is a 422 naming the field, never a 500."""
from __future__ import annotations

import pytest


def test_a_lone_surrogate_in_a_title_is_a_422_naming_it_and_changes_nothing(api):
    chat = api.post("/api/chats", {"title": "kept"}).body
    r = api.patch(f"/api/chats/{chat['id']}", {"title": "x\ud800"})  # json.dumps sends the escape \ud800
    assert r.status == 422, r
    assert r.body["error"]["code"] == "invalid" and "unpaired surrogate" in r.body["error"]["fields"]["title"]
    assert api.get(f"/api/chats/{chat['id']}").body["title"] == "kept"
    # A whole pair is a character like any other.
    r = api.patch(f"/api/chats/{chat['id']}", {"title": "x\U0001F600"})
    assert r.status == 200 and r.body["title"] == "x\U0001F600"


UNKEEPABLE = [
    (b'{"title": "a", "params": {"reasoning_effort": "\\udc00"}}', "params.reasoning_effort", "unpaired surrogate"),
    (b'{"ti\\ud800tle": "a"}', "ti\ufffdtle", "unpaired surrogate"),
    (b'{"title": "a", "params": {"temperature": NaN}}', "params.temperature", "NaN"),
    (b'{"title": "a", "params": {"top_p": -Infinity}}', "params.top_p", "-Infinity"),
    (b'{"title": "a", "params": {"top_p": 1e400}}', "params.top_p", "outside the numbers"),
    (b'{"title": "a", "params": {"max_tokens": 9223372036854775808}}', "params.max_tokens", "outside the numbers"),
    (b'{"title": "a", "params": {"max_tokens": ' + b"9" * 5000 + b'}}', "params.max_tokens", "outside the numbers"),
    (b'"\\ud800"', "body", "unpaired surrogate"),
]


def test_values_numi_cannot_keep_are_422_with_the_place(api):
    for raw, field, needle in UNKEEPABLE:
        r = api.post("/api/chats", raw=raw)
        assert r.status == 422, (raw[:80], r)
        fields = r.body["error"]["fields"]
        assert needle in fields[field], fields
    assert api.get("/api/chats").body["items"] == []


def test_every_problem_is_named_at_once(api):
    r = api.post("/api/folders", raw=b'{"name": "\\ud800", "params": {"top_p": NaN, "max_tokens": 1e999}}')
    assert r.status == 422, r
    assert set(r.body["error"]["fields"]) == {"name", "params.top_p", "params.max_tokens"}


@pytest.mark.parametrize("depth", [150, 100_000])
def test_deep_nesting_is_a_400_not_a_crash(api, depth):
    r = api.post("/api/chats", raw=b'{"title": "a", "params": ' + b"[" * depth + b"]" * depth + b"}")
    assert r.status == 400, r
    assert r.body["error"]["code"] == "bad_request" and "deeper than 100" in r.body["error"]["message"]
    assert api.get("/api/chats").body["items"] == []


def test_huge_whole_numbers_where_numbers_are_expected_are_422(api):
    provider = api.post("/api/providers", {"kind": "openai", "name": "P"}).body
    for raw in (b'{"provider_id": "%s", "api_model": "m", "context_window": 9223372036854775807}',
                b'{"provider_id": "%s", "api_model": "m", "context_window": 99999999999999999999999}'):
        r = api.post("/api/models", raw=raw % provider["id"].encode())
        assert r.status == 422 and "context_window" in r.body["error"]["fields"], r
    assert api.get("/api/models").body == []


def test_a_base_url_that_cannot_go_into_a_request_is_422(api):
    for base_url in ("http://127.0.0.1:1/v1\x00", "http://127.0.0.1:1/v1\r\nX-Injected: 1", "http://[::1/v1"):
        r = api.post("/api/providers", {"kind": "openai_compatible", "name": "Local", "base_url": base_url})
        assert r.status == 422 and "base_url" in r.body["error"]["fields"], r
    assert api.get("/api/providers").body == []


def test_a_message_id_in_the_query_that_is_no_id_is_422(api):
    chat = api.post("/api/chats", {"title": "t"}).body
    for before in ("99999999999999999999", "%C2%B2", "-1", "1.5"):
        r = api.get(f"/api/chats/{chat['id']}/messages?before={before}")
        assert r.status == 422 and "before" in r.body["error"]["fields"], (before, r)
    # A well-formed id that is not one of the chat's messages: there is no page above it.
    r = api.get(f"/api/chats/{chat['id']}/messages?before=12")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"
