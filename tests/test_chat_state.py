"""A chat's own state (tool policies, standing rules, the plan it executes) on a real database:
kept per chat, gone with the chat, and moved out of the app's settings by migration 17."""
from __future__ import annotations

import json

import pytest

from backend.features import plans
from backend.store import chat_state, housekeeping, settings
from backend.store.db import db, open_database
from backend.store.models import Chat, ChatState, Setting
from backend.turns import approvals


def setting_keys() -> set[str]:
    return {row.key for row in Setting.select(Setting.key)}


def test_policies_rules_and_the_plan_executing_are_the_chats_own(store):
    a, b = Chat.create(title="a").id, Chat.create(title="b").id
    approvals.set_policy(a, "guarded", "deny")
    approvals.set_policy(None, "guarded", "allow")
    approvals.remember(a, {"tool": "guarded"})
    approvals.remember(b, {"tool": "shell", "command": "ls"})
    chat_state.put(a, plans.EXECUTING_KEY, "p_1")
    assert approvals.policies(a) == {"guarded": "deny"} and approvals.policies(b) == {}
    assert approvals.policies(None) == {"guarded": "allow"}
    assert plans.executing(a) == "p_1" and plans.executing(b) is None
    assert approvals.all_rules() == sorted([{"chat_id": a, "tool": "guarded"},
                                            {"chat_id": b, "tool": "shell", "command": "ls"}],
                                           key=lambda r: r["chat_id"])
    # Only the default policy is an app setting.
    assert setting_keys() == {approvals.DEFAULT_KEY}
    # Clearing the last of a kind leaves no row behind.
    approvals.set_policy(a, "guarded", None)
    assert approvals.forget(b, {"tool": "shell", "command": "ls"})
    plans.mode_changed(a)
    assert [(r.chat_id, r.key) for r in ChatState.select()] == [(a, approvals.RULES_KEY)]


def test_a_purged_chat_leaves_nothing_behind(store):
    gone, temp, kept = (Chat.create(title=t, temporary=t == "temp").id for t in ("gone", "temp", "kept"))
    for chat in (gone, temp, kept):
        approvals.set_policy(chat, "guarded", "ask")
        approvals.remember(chat, {"tool": "guarded"})
        chat_state.put(chat, plans.EXECUTING_KEY, "p_" + chat)
    with db.atomic():
        housekeeping.purge_chats([gone])
    assert housekeeping.remove_temporary() == 1
    assert {r.chat_id for r in ChatState.select()} == {kept}
    assert approvals.all_rules() == [{"chat_id": kept, "tool": "guarded"}]
    # A chat that is gone keeps nothing written for it afterwards (a turn finishing late).
    approvals.remember(gone, {"tool": "upper"})
    approvals.set_policy(gone, "upper", "allow")
    assert approvals.rules(gone) == [] and approvals.policies(gone) == {}
    assert {r.chat_id for r in ChatState.select()} == {kept}


def test_the_paced_purge_takes_the_chats_state_too(store):
    chat = Chat.create(title="long").id
    approvals.remember(chat, {"tool": "guarded"})
    housekeeping.purge_chats_paced([chat], pause=False)
    assert ChatState.select().count() == 0


# -- migration 17 ------------------------------------------------------------------------------

@pytest.fixture
def old_db(database_at):
    return database_at(16)


def test_migration_moves_each_chats_state_and_drops_what_chats_no_longer_exist_left(old_db):
    path, old = old_db
    for chat_id, deleted_at in (("c_live", None), ("c_trash", 5.0)):
        old.execute_sql("INSERT INTO chat (id, title, created_at, updated_at, deleted_at) VALUES (?, '', 0, 0, ?)",
                        (chat_id, deleted_at))
    rows = {
        "tool_policy:c_live": {"guarded": "deny"},
        "allow_always:c_live": ["guarded", {"tool": "shell", "command": "ls"}],
        "plan_executing:c_live": "p_1",
        "allow_always:c_trash": [{"tool": "web_fetch", "origin": "https://a.example:443"}],
        # A purged chat's rules, which stayed listed and could not be deleted.
        "allow_always:c_purged": [{"tool": "guarded"}],
        "tool_policy:c_purged": {"guarded": "allow"},
        "plan_executing:c_purged": "p_2",
        # App settings stay where they are.
        "tool_policy_default": {"shell": "ask"},
        "tool_approved:mcp__s__t": "abc",
        "default_model_id": "m_1",
        "web_search": {"backend": None},
    }
    for key, value in rows.items():
        old.execute_sql("INSERT INTO setting (key, value_json) VALUES (?, ?)", (key, json.dumps(value)))
    old.close()

    open_database(str(path))
    db.connect(reuse_if_open=True)
    moved = {(r.chat_id, r.key): r.value for r in ChatState.select()}
    assert moved == {("c_live", "tool_policy"): {"guarded": "deny"},
                     ("c_live", "allow_always"): ["guarded", {"tool": "shell", "command": "ls"}],
                     ("c_live", "plan_executing"): "p_1",
                     ("c_trash", "allow_always"): [{"tool": "web_fetch", "origin": "https://a.example:443"}]}
    assert setting_keys() == {"tool_policy_default", "tool_approved:mcp__s__t", "default_model_id", "web_search"}
    assert settings.get("default_model_id") == "m_1"
    # Read as before: bare tool names from older rules included.
    assert approvals.policies("c_live") == {"guarded": "deny"} and plans.executing("c_live") == "p_1"
    assert approvals.all_rules() == [{"chat_id": "c_live", "tool": "guarded"},
                                     {"chat_id": "c_live", "tool": "shell", "command": "ls"},
                                     {"chat_id": "c_trash", "tool": "web_fetch", "origin": "https://a.example:443"}]
    # And the moved rows go with their chat.
    with db.atomic():
        housekeeping.purge_chats(["c_live"])
    assert {r.chat_id for r in ChatState.select()} == {"c_trash"}
