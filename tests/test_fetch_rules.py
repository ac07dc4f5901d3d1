"""What a turn may fetch, decided on a real database: "allow always" for web_fetch is one origin (a rule
from before, without one, still covers public pages), the URLs a person typed on the active branch,
and the trusted origins of Settings → Web fetch as they are stored."""
from __future__ import annotations

import json

import pytest

from backend.core.types import ToolCall
from backend.features.web import fetch_setting
from backend.store import chat_state, history
from backend.store.db import db, open_database
from backend.store.models import Chat, Setting
from backend.turns import approvals


@pytest.fixture
def chat(tmp_path):
    open_database(str(tmp_path / "numi.db"))
    db.connect(reuse_if_open=True)
    yield Chat.create(title="t").id
    db.close()


def fetch_call(**args) -> ToolCall:
    return ToolCall("c1", "web_fetch", json.dumps(args))


def test_allow_always_for_web_fetch_is_one_origin(chat):
    rule = approvals.rule_for(fetch_call(url="https://Docs.Example/a/b?c=1"))
    assert rule == {"tool": "web_fetch", "origin": "https://docs.example:443"}
    approvals.remember(chat, rule)
    for url in ("https://docs.example/other", "https://docs.example:443/x", "HTTPS://DOCS.EXAMPLE/"):
        assert approvals.covered(chat, fetch_call(url=url)), url
    for url in ("http://docs.example/a", "https://docs.example:8443/a", "https://evil.example/a",
                "https://docs.example.evil.example/", "not a url"):
        assert not approvals.covered(chat, fetch_call(url=url)), url
    # Research reads many pages at once: covered only when every one is.
    assert approvals.covered(chat, fetch_call(urls=["https://docs.example/1", "https://docs.example/2"]))
    assert not approvals.covered(chat, fetch_call(urls=["https://docs.example/1", "https://evil.example/2"]))
    assert not approvals.covered(chat, fetch_call(urls=[]))
    # A call with many pages, or none that can be read, leaves no rule.
    assert approvals.rule_for(fetch_call(urls=["https://docs.example/1"])) is None
    assert approvals.rule_for(fetch_call(url="file:///etc/passwd")) is None


def test_a_rule_from_before_origins_covers_public_pages(chat):
    chat_state.put(chat, approvals.RULES_KEY, [{"tool": "web_fetch"}])
    assert approvals.covered(chat, fetch_call(url="https://anything.example/"))
    # Private addresses never reach the rules: the turn asks first (tests/test_protocol_fetch_approvals.py).


def test_urls_the_person_typed_on_the_active_branch(chat):
    first = history.append(chat, None, role="user", content="Read http://127.0.0.1:8123/a), and <https://wiki.lan/x>.")
    history.append(chat, first.id, role="assistant", content="See http://10.0.0.1/said-by-the-model")
    assert fetch_setting.typed_urls(chat) == {"http://127.0.0.1:8123/a", "https://wiki.lan/x"}
    # Another version of the question: only what is on the branch now counts.
    history.append(chat, None, role="user", content="Instead: http://192.168.1.1/status")
    assert fetch_setting.typed_urls(chat) == {"http://192.168.1.1/status"}


def test_trusted_origins_are_stored_in_one_spelling_and_used_as_origins(chat):
    assert fetch_setting.canonical_origin(" HTTP://Wiki.LAN:80/ ") == "http://wiki.lan"
    assert fetch_setting.canonical_origin("https://[::1]:8443") == "https://[::1]:8443"
    for bad in ("http://wiki.lan/docs", "http://wiki.lan?x", "http://wiki.lan#top", "ftp://wiki.lan",
                "http://u:p@wiki.lan", "wiki.lan", "http://:80", 5, None):
        with pytest.raises(ValueError):
            fetch_setting.canonical_origin(bad)
    Setting.insert(key="web_fetch", value={"allow_private": ["http://wiki.lan", "https://nas:5001", "garbage"]}).execute()
    assert fetch_setting.origins() == {"http://wiki.lan:80", "https://nas:5001"}
