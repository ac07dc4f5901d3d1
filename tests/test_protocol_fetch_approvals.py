"""web_fetch approvals through the real server (issue 31): a fetch into the person's own network asks
even where the policy allows web_fetch, and reads only the URL approved; a URL the person typed, or
a site listed under Settings → Web fetch, is read as any page; "allow always" covers one origin and
never a private address; the setting itself is checked."""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S
from tests.research_fakes import FakeWeb, trust_local
from tests.test_protocol_modes import call, tooled, turn  # noqa: F401 (tooled: a fixture)


@pytest.fixture
def web():
    fake = FakeWeb({"effect": "<p>A GET that changed something.</p>", "page": "<p>A page.</p>"})
    yield fake
    fake.close()


@pytest.fixture
def other():
    fake = FakeWeb({"page": "<p>Another site.</p>"})
    yield fake
    fake.close()


def fetch_call(url: str) -> list[dict]:
    return [call(0, "web_fetch", {"url": url})]


def policy(setup, chat: str, value: str) -> None:
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "web_fetch", "policy": value}).status == 200


def test_a_fetch_into_the_persons_network_asks_even_when_web_fetch_is_allowed(tooled, web):
    setup = tooled
    chat = setup.chat(title="t")
    policy(setup, chat, "allow")
    effect = web.page_url("effect")
    setup.fake.enqueue(fetch_call(effect), [S.text("ok")])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    ask = sock.until("approval_required", turn_id=t)
    assert ask["name"] == "web_fetch" and ask["can_always"] is False  # no rule can cover a private address
    assert ask["local"]["url"] == effect and "your own network" in ask["local"]["reason"]
    assert web.fetched == []
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    assert web.fetched == []

    # Approved, that exact URL is read.
    setup.fake.enqueue(fetch_call(effect), [S.text("ok")])
    t = turn(sock, "r2")
    ask = sock.until("approval_required", turn_id=t)
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    sock.until("turn_end", turn_id=t)
    assert sock.of("tool_end", turn_id=t)[0]["ok"] and web.fetched == ["effect"]


def test_an_approved_url_is_the_only_one_read(tooled, web):
    setup = tooled
    chat = setup.chat(title="t")
    page = web.page_url("page")
    # The approved page redirects to another page of the same server: that one was not approved.
    web.redirects = {"/page/page": web.page_url("effect")}
    setup.fake.enqueue(fetch_call(page), [S.text("ok")])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    ask = sock.until("approval_required", turn_id=t)
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    sock.until("turn_end", turn_id=t)
    end = sock.of("tool_end", turn_id=t)[0]
    assert not end["ok"] and "redirected to" in end["output"] and "which was not followed" in end["output"]
    assert web.fetched == ["/page/page"]


def test_a_typed_url_or_a_trusted_site_is_read_as_the_policy_says(tooled, web):
    setup = tooled
    chat = setup.chat(title="t")
    policy(setup, chat, "allow")
    effect = web.page_url("effect")
    setup.fake.enqueue(fetch_call(effect), [S.text("ok")])
    sock = setup.socket(chat)
    t = turn(sock, "r1", f"Please read {effect}.")
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    assert not sock.of("approval_required") and web.fetched == ["effect"]

    page = web.page_url("page")  # never typed, but its site is trusted
    trust_local(setup.api, web.url)
    setup.fake.enqueue(fetch_call(page), [S.text("ok")])
    t = turn(sock, "r2")
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    assert not sock.of("approval_required") and web.fetched == ["effect", "page"]


def test_allow_always_covers_one_origin_and_never_a_private_address(tooled, web, other):
    setup = tooled
    trust_local(setup.api, web.url, other.url)
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    setup.fake.enqueue(fetch_call(web.page_url("page")), [S.text("ok")])
    t = turn(sock, "r1")
    ask = sock.until("approval_required", turn_id=t)  # web_fetch asks by default
    assert ask["can_always"] is True
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    sock.until("turn_end", turn_id=t)
    rules = setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"]
    rule = {"chat_id": chat, "tool": "web_fetch", "origin": web.url}
    assert rules == [rule]

    # Another page of that site runs unasked; another site asks.
    setup.fake.enqueue(fetch_call(web.page_url("effect")), [S.text("ok")])
    t = turn(sock, "r2")
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    assert not sock.of("approval_required", turn_id=t) and web.fetched == ["page", "effect"]
    setup.fake.enqueue(fetch_call(other.page_url("page")), [S.text("ok")])
    t = turn(sock, "r3")
    ask = sock.until("approval_required", turn_id=t)
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    assert other.fetched == []

    # No longer trusted, the site is a private address again: the rule does not cover it.
    trust_local(setup.api, other.url)
    setup.fake.enqueue(fetch_call(web.page_url("page")), [S.text("ok")])
    t = turn(sock, "r4")
    ask = sock.until("approval_required", turn_id=t)
    assert ask["can_always"] is False
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    assert web.fetched == ["page", "effect"]
    r = setup.api.request("DELETE", "/api/approvals/rules",
                          {"chat_id": chat, "rule": {"tool": "web_fetch", "origin": web.url}})
    assert r.status == 204, r


def test_the_web_fetch_setting_is_checked(api):
    assert api.get("/api/settings").body["web_fetch"] == {"allow_private": []}
    bad = [["http://wiki.lan/docs"], ["ftp://wiki.lan"], ["http://me:secret@wiki.lan"], ["wiki.lan"],
           ["http://wiki.lan?x=1"], [5], "http://wiki.lan", ["http://wiki.lan:99999"]]
    for value in bad:
        r = api.patch("/api/settings", {"web_fetch": {"allow_private": value}})
        assert r.status == 422, (value, r)
        assert "web_fetch.allow_private" in r.body["error"]["fields"], r
    r = api.patch("/api/settings", {"web_fetch": {"allow_private": ["http://a"], "allow": []}})
    assert r.status == 422 and "web_fetch.allow" in r.body["error"]["fields"]
    assert api.patch("/api/settings", {"web_fetch": []}).status == 422
    assert api.get("/api/settings").body["web_fetch"] == {"allow_private": []}  # refused: nothing changed
    message = api.patch("/api/settings", {"web_fetch": {"allow_private": ["http://wiki.lan/docs"]}}).body
    assert "without a path" in json.dumps(message)

    r = api.patch("/api/settings", {"web_fetch": {"allow_private": [
        "HTTP://Wiki.LAN:80/", "http://127.0.0.1:8123", "https://[::1]:443", "http://wiki.lan", "https://nas:5001"]}})
    assert r.status == 200, r
    assert r.body["web_fetch"] == {"allow_private": ["http://wiki.lan", "http://127.0.0.1:8123", "https://[::1]",
                                                     "https://nas:5001"]}
    assert api.patch("/api/settings", {"web_fetch": {"allow_private": None}}).body["web_fetch"] == {"allow_private": []}
