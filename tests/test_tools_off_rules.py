"""Tools per chat and folder (CONTRACT §15) in process (tests/engine.py): a tool that is off, or
whose policy is `deny`, is not in the request and a call to it is answered as an unknown tool; a
chat's null follows its folder's list as it is at each request. Over the wire, with real MCP
servers: tests/test_protocol_tools_off.py."""
from __future__ import annotations

from backend.core import tokens
from backend.store import chats
from backend.store.models import Chat, Folder
from backend.turns import approvals, next_request, tools_off
from backend.turns.toolset import LeftOut


def offered(engine, chat_id: str) -> set[str]:
    """The tool names the chat's next request carries (the builder the turn, meter and inspector share)."""
    _, toolset, plan = next_request.prepare(engine.services, chats.get(chat_id))
    assert {t.name for t in plan.request.tools} == {t.name for t in toolset.all()}
    return {t.name for t in plan.request.tools}


def unknown_answer(engine, name: str) -> str:
    """What a call to `name` gets in a chat with nothing off."""
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls(name, {"text": "hi"}, "u1")
    engine.model.says("ok")
    engine.turns.send(chat, "ru", "go", [])
    events.until("turn_end")
    return events.of("tool_end")[0]["output"]


def test_left_out_takes_names_and_whole_servers():
    left = LeftOut.of(["upper", "mcp__files__*", "mcp__files__read"], denied=["guarded"])
    assert left.tool("upper") and left.tool("guarded") and left.tool("mcp__files__read")
    assert not left.tool("mcp__files__write") and not left.tool("mcp__files__*")
    assert left.server("files") and not left.server("file") and not left.server("other")


def test_a_tool_that_is_off_is_not_offered_and_a_call_to_it_is_answered_as_unknown(engine):
    assert {"upper", "guarded", "ask_user"} <= offered(engine, engine.chat())
    chat = engine.chat(tools_off=["upper"])
    assert "upper" not in offered(engine, chat) and {"guarded", "ask_user"} <= offered(engine, chat)

    events = engine.events(chat)
    engine.model.calls("upper", {"text": "hi"}, "c1")
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    assert events.until("turn_end")["status"] == "completed"
    [end] = events.of("tool_end")
    assert not end["ok"] and not events.of("approval_required")
    # Word for word what a name nobody registered gets, not the "not offered" of a mode.
    assert end["output"] == unknown_answer(engine, "nonexistent").replace("'nonexistent'", "'upper'")
    assert "no tool named 'upper'" in end["output"]
    sent = {t.name for t in engine.model.requests[0].tools}
    assert "upper" not in sent and "guarded" in sent


def test_an_off_tool_is_unknown_in_plan_mode_too_not_held_back_by_the_mode(engine):
    chat = engine.chat(mode="plan", tools_off=["guarded"])
    events = engine.events(chat)
    engine.model.calls_each([("c1", "guarded", {"text": "x"}), ("c2", "upper", {"text": "y"})])
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    events.until("turn_end")
    ends = {e["name"]: e["output"] for e in events.of("tool_end")}
    assert "no tool named 'guarded'" in ends["guarded"]  # off: unknown
    assert ends["upper"].startswith("Not offered in Plan mode.")  # on, but the mode holds it back


def test_a_denied_tool_is_not_offered_whether_the_chat_or_the_default_denies_it(engine):
    chat = engine.chat()
    approvals.set_policy(chat, "guarded", "deny")
    approvals.set_policy(None, "upper", "deny")
    assert not {"guarded", "upper"} & offered(engine, chat)
    assert "upper" not in offered(engine, engine.chat()) and "guarded" in offered(engine, engine.chat())
    # The chat's own policy wins over the default, as when a call is decided.
    approvals.set_policy(chat, "upper", "allow")
    assert "upper" in offered(engine, chat) and "guarded" not in offered(engine, chat)
    assert tools_off.denied(chat) == {"guarded"} and tools_off.denied(None) == {"upper"}

    events = engine.events(chat)
    engine.model.calls("guarded", {"text": "x"}, "c1")
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    events.until("turn_end")
    [end] = events.of("tool_end")
    assert "no tool named 'guarded'" in end["output"] and not events.of("approval_required")


def test_a_chat_follows_its_folder_s_list_as_it_is_now_unless_it_has_its_own(engine):
    folder = Folder.create(name="Trips", tools_off=["upper"])
    follows = engine.chat(folder=folder.id)
    own = engine.chat(folder=folder.id, tools_off=["guarded"])
    nothing = engine.chat(folder=folder.id, tools_off=[])
    assert "upper" not in offered(engine, follows)
    assert "upper" in offered(engine, own) and "guarded" not in offered(engine, own)
    assert {"upper", "guarded"} <= offered(engine, nothing)
    assert chats.tools_off(chats.get(follows)) == (None, ["upper"], ["upper"])

    # Changing the folder reaches its following chats at once, and only them.
    Folder.update(tools_off=["guarded"]).where(Folder.id == folder.id).execute()
    assert "upper" in offered(engine, follows) and "guarded" not in offered(engine, follows)
    assert "upper" in offered(engine, own)
    # Out of the folder, nothing is off.
    Chat.update(folder=None).where(Chat.id == follows).execute()
    assert {"upper", "guarded"} <= offered(engine, follows)
    assert chats.tools_off(chats.get(follows)) == (None, None, [])


def test_the_listing_counts_what_the_meter_counts(engine):
    chat = engine.chat(tools_off=["upper"])
    approvals.set_policy(chat, "guarded", "deny")
    listing = tools_off.chat_listing(engine.services.toolsets, chats.get(chat))
    assert listing["tools_off"] == ["upper"] and listing["inherited"] is None and listing["effective"] == ["upper"]
    [builtin] = listing["groups"]  # no MCP server in this engine
    assert builtin["id"] == "builtin" and builtin["server"] is None and builtin["pattern"] is None
    rows = {t["name"]: t for t in builtin["tools"]}
    assert (rows["upper"]["on"], rows["upper"]["off_by"]) == (False, "chat")
    assert (rows["guarded"]["on"], rows["guarded"]["off_by"]) == (False, "policy")
    assert rows["ask_user"]["on"] and rows["ask_user"]["off_by"] is None
    assert "update_plan" not in rows  # ask mode never offers it: the list is what the request could carry
    # What is on costs what the request's tools cost; the group's cost leaves out only the denied tool.
    _, _, plan = next_request.prepare(engine.services, chats.get(chat))
    assert sum(t["tokens"] for t in builtin["tools"] if t["on"]) == plan.parts["tools"] > 0
    assert builtin["tokens"] == plan.parts["tools"] + rows["upper"]["tokens"]
    assert rows["upper"]["tokens"] == tokens.tools_tokens([t.spec for t in engine.services.toolsets.plugins.all()
                                                           if t.name == "upper"])


def test_a_folder_lists_every_tool_its_chats_could_get(engine):
    folder = Folder.create(name="Code", tools_off=["shell"])
    listing = tools_off.folder_listing(engine.services.toolsets, folder)
    assert (listing["tools_off"], listing["inherited"], listing["effective"]) == (["shell"], None, ["shell"])
    rows = {t["name"]: t for t in listing["groups"][0]["tools"]}
    # The workspace tools and update_plan too: some chat of the folder may have a workspace or be in plan mode.
    assert {"read_file", "write_file", "update_plan", "upper"} <= set(rows)
    assert (rows["shell"]["on"], rows["shell"]["off_by"]) == (False, "folder")


def test_migration_19_leaves_every_chat_and_folder_with_nothing_off(database_at):
    from backend.store.db import db, open_database

    path, old = database_at(18)
    old.execute_sql("INSERT INTO folder (id, name, params_json, created_at) VALUES ('f_old', 'Old', '{}', 0)")
    old.execute_sql("INSERT INTO chat (id, title, folder_id, created_at, updated_at) VALUES ('c_old', 'x', 'f_old', 0, 0)")
    old.close()
    open_database(str(path))
    db.connect(reuse_if_open=True)
    chat = chats.get("c_old")
    assert chat.tools_off is None and Folder.get_by_id("f_old").tools_off is None
    assert chats.tools_off(chat) == (None, None, [])
