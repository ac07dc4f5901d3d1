"""Tools per chat and folder (CONTRACT §15) over the real server, the fake provider and real MCP
servers: what is off or denied is not in the request the provider receives, nor in
`GET …/inspect`, and `parts.tools` shows the saving; a call to it is answered as an unknown tool;
a chat follows its folder's list; an MCP server off as a whole is never started; the tools
routes list it all without starting anything; bad lists are 422 and change nothing."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fakeprovider import script as S

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


@pytest.fixture
def tools_setup(setup, tmp_path):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    setup.started = {}
    for server in ("a", "b"):
        setup.started[server] = tmp_path / f"started-{server}.txt"
        r = setup.api.post("/api/mcp/servers", {
            "id": server, "transport": "stdio", "command": sys.executable, "args": [SERVER],
            "env": {"NUMI_MCP_TEST_STARTED_FILE": str(setup.started[server])}, "call_timeout": 20})
        assert r.status == 201, r
    yield setup
    for server in ("a", "b"):
        setup.api.request("DELETE", f"/api/mcp/servers/{server}")


def sent_tools(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools") or []}


def turn(setup, chat: str, *steps, content: str = "go") -> list[dict]:
    """One turn, answered by `steps` (default: a plain reply); the socket's events."""
    setup.fake.enqueue(*(steps or ([S.text("ok")],)))
    sock = setup.socket(chat)
    sock.send(type="send", request_id=f"r-{content}", content=content)
    end = sock.until("turn_end")
    assert end["status"] == "completed", end
    sock.close()
    return sock.events


def inspected(api, chat: str) -> set[str]:
    body = api.get(f"/api/chats/{chat}/inspect").body["body"]
    return {t["function"]["name"] for t in body.get("tools") or []}


def tools_tokens(api, chat: str) -> int:
    return api.get(f"/api/chats/{chat}/context").body["parts"]["tools"]


def test_a_tool_that_is_off_leaves_the_request_the_inspector_and_the_meter(tools_setup):
    setup, api = tools_setup, tools_setup.api
    chat = setup.chat(title="t")
    before = tools_tokens(api, chat)
    assert {"upper", "guarded", "ask_user"} <= inspected(api, chat)

    r = api.patch(f"/api/chats/{chat}", {"tools_off": ["upper", "upper", "ask_user"]})
    assert r.status == 200 and r.body["tools_off"] == ["upper", "ask_user"]  # duplicates dropped, order kept
    assert api.get(f"/api/chats/{chat}").body["tools_off"] == ["upper", "ask_user"]
    [exported] = api.get(f"/api/chats/{chat}/export?format=json").body["chats"]
    assert exported["tools_off"] == ["upper", "ask_user"]  # with the chat's other settings
    listing = api.get(f"/api/chats/{chat}/tools").body
    rows = {t["name"]: t for g in listing["groups"] for t in g["tools"]}
    saved = rows["upper"]["tokens"] + rows["ask_user"]["tokens"]
    assert tools_tokens(api, chat) == before - saved and saved > 0
    assert not {"upper", "ask_user"} & inspected(api, chat) and "guarded" in inspected(api, chat)

    # The model calls it anyway: answered as a tool that does not exist, and the turn goes on.
    events = turn(setup, chat, [S.tool_call(0, "c1", "upper", json.dumps({"text": "hi"}))],
                  [S.tool_call(0, "c2", "nonexistent", json.dumps({"text": "hi"}))], [S.text("ok")])
    first, unknown = [e for e in events if e["type"] == "tool_end"]
    assert not first["ok"] and "no tool named 'upper'" in first["output"]
    assert first["output"] == unknown["output"].replace("'nonexistent'", "'upper'")
    request = setup.fake.requests[0]
    assert not {"upper", "ask_user"} & sent_tools(request) and "guarded" in sent_tools(request)

    # [] turns nothing off; null follows the folder (here: none).
    assert api.patch(f"/api/chats/{chat}", {"tools_off": []}).status == 200
    assert tools_tokens(api, chat) == before
    assert api.patch(f"/api/chats/{chat}", {"tools_off": None}).body["tools_off"] is None


def test_a_denied_tool_is_not_offered(tools_setup):
    setup, api = tools_setup, tools_setup.api
    chat = setup.chat(title="t")
    assert api.put("/api/approvals/policy", {"chat_id": chat, "tool": "guarded", "policy": "deny"}).status == 200
    assert api.put("/api/approvals/policy", {"tool": "upper", "policy": "deny"}).status == 200
    assert not {"guarded", "upper"} & inspected(api, chat)
    turn(setup, chat)
    assert not {"guarded", "upper"} & sent_tools(setup.fake.requests[0])
    rows = {t["name"]: t for t in api.get(f"/api/chats/{chat}/tools").body["groups"][0]["tools"]}
    assert (rows["guarded"]["on"], rows["guarded"]["off_by"]) == (False, "policy")
    assert (rows["upper"]["on"], rows["upper"]["off_by"]) == (False, "policy")
    # Another chat follows the default only.
    other = setup.chat(title="o")
    assert "guarded" in inspected(api, other) and "upper" not in inspected(api, other)


def test_a_chat_follows_its_folder_at_once_and_a_new_chat_does_not_copy_the_list(tools_setup):
    setup, api = tools_setup, tools_setup.api
    folder = api.post("/api/folders", {"name": "Trips", "tools_off": ["upper"]})
    assert folder.status == 201 and folder.body["tools_off"] == ["upper"]
    fid = folder.body["id"]
    chat = setup.chat(title="t", folder_id=fid)
    assert api.get(f"/api/chats/{chat}").body["tools_off"] is None  # follows, not a copy
    assert "upper" not in inspected(api, chat)
    listing = api.get(f"/api/chats/{chat}/tools").body
    assert (listing["tools_off"], listing["inherited"], listing["effective"]) == (None, ["upper"], ["upper"])
    rows = {t["name"]: t for t in listing["groups"][0]["tools"]}
    assert rows["upper"]["off_by"] == "folder"

    assert api.patch(f"/api/folders/{fid}", {"tools_off": ["guarded"]}).body["tools_off"] == ["guarded"]
    assert "upper" in inspected(api, chat) and "guarded" not in inspected(api, chat)
    turn(setup, chat)
    assert "guarded" not in sent_tools(setup.fake.requests[0])
    # Its own list wins; [] turns nothing off even in the folder.
    assert api.patch(f"/api/chats/{chat}", {"tools_off": []}).status == 200
    assert {"upper", "guarded"} <= inspected(api, chat)
    folder_listing = api.get(f"/api/folders/{fid}/tools").body
    assert (folder_listing["tools_off"], folder_listing["inherited"]) == (["guarded"], None)


def test_an_mcp_server_off_as_a_whole_is_never_started_nor_offered(tools_setup):
    setup, api = tools_setup, tools_setup.api
    chat = setup.chat(title="t", tools_off=["mcp__b__*", "mcp__a__echo"])
    turn(setup, chat)
    offered = sent_tools(setup.fake.requests[0])
    assert "mcp__a__add" in offered and "mcp__a__echo" not in offered
    assert not [n for n in offered if n.startswith("mcp__b__")]
    assert setup.started["a"].exists() and not setup.started["b"].exists()

    # The listing starts nothing: b, never listed, is a group with no tools but its pattern.
    listing = api.get(f"/api/chats/{chat}/tools").body
    groups = {g["id"]: g for g in listing["groups"]}
    assert [g["id"] for g in listing["groups"]] == ["builtin", "mcp:a", "mcp:b"]
    a, b = groups["mcp:a"], groups["mcp:b"]
    assert (b["server"], b["pattern"], b["on"], b["tools"], b["tokens"]) == ("b", "mcp__b__*", False, [], 0)
    rows = {t["name"]: t for t in a["tools"]}
    assert a["on"] and a["pattern"] == "mcp__a__*" and rows["mcp__a__add"]["on"]
    assert (rows["mcp__a__echo"]["on"], rows["mcp__a__echo"]["off_by"]) == (False, "chat")
    assert rows["mcp__a__echo"]["description"] == "Echo the text back."
    assert a["tokens"] == sum(t["tokens"] for t in a["tools"])
    assert not setup.started["b"].exists() and len(setup.started["a"].read_text().split()) == 1
    # What is on costs exactly what the meter counts.
    on = sum(t["tokens"] for g in listing["groups"] for t in g["tools"] if t["on"])
    assert on == tools_tokens(api, chat)

    # Server a off as a whole too: its listed tools show as off by the chat.
    api.patch(f"/api/chats/{chat}", {"tools_off": ["mcp__a__*", "mcp__b__*"]})
    a = {g["id"]: g for g in api.get(f"/api/chats/{chat}/tools").body["groups"]}["mcp:a"]
    assert not a["on"] and {t["off_by"] for t in a["tools"]} == {"chat"}
    assert not [n for n in inspected(api, chat) if n.startswith("mcp__")]
    assert not setup.started["b"].exists()


BAD = [
    ("upper", "Must be a list of tool names"),
    ({"upper": True}, "Must be a list of tool names"),
    (["x"] * 501, "at most 500"),
    ([f"t{i}" for i in range(501)], "at most 500"),
    (["upper", ""], "Item 2 must be a tool name"),
    (["   "], "Item 1 must be a tool name"),
    (["upper", 3], "Item 2 must be a tool name"),
    ([None], "Item 1 must be a tool name"),
    (["x" * 201], "Item 1 is 201 characters long"),
]


def test_a_bad_list_is_422_and_changes_nothing(api):
    chat = api.post("/api/chats", {"title": "kept", "tools_off": ["upper"]}).body["id"]
    folder = api.post("/api/folders", {"name": "G", "tools_off": ["guarded"]}).body["id"]
    for value, sentence in BAD:
        for path, body in (("/api/chats", {}), ("/api/folders", {"name": "F"})):
            r = api.post(path, {**body, "tools_off": value})
            assert r.status == 422 and sentence in r.body["error"]["fields"]["tools_off"], (value, r)
        r = api.patch(f"/api/chats/{chat}", {"title": "changed", "tools_off": value})
        assert r.status == 422 and sentence in r.body["error"]["fields"]["tools_off"], (value, r)
        r = api.patch(f"/api/folders/{folder}", {"name": "H", "tools_off": value})
        assert r.status == 422 and sentence in r.body["error"]["fields"]["tools_off"], (value, r)
    saved = api.get(f"/api/chats/{chat}").body
    assert (saved["title"], saved["tools_off"]) == ("kept", ["upper"])
    saved = api.get(f"/api/folders/{folder}").body
    assert (saved["name"], saved["tools_off"]) == ("G", ["guarded"])
    assert [f["name"] for f in api.get("/api/folders").body["items"]] == ["G"]


def test_the_limits_themselves_are_accepted_and_unknown_ids_are_404(api):
    names = [f"t{i}" for i in range(499)] + ["x" * 200]
    r = api.post("/api/chats", {"tools_off": names})
    assert r.status == 201 and r.body["tools_off"] == names
    assert api.get("/api/chats/c_nope/tools").status == 404
    assert api.get("/api/folders/f_nope/tools").status == 404
