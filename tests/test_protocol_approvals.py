"""Approvals through the real server: policies, standing rules (a shell rule is one exact
command), edited arguments, and Stop ending a running command."""
from __future__ import annotations

import json
import time

import pytest

from tests.fakeprovider import script as S


def shell_call(call_id: str, command: str) -> list[dict]:
    return [S.tool_call(0, call_id, "shell", json.dumps({"command": command}))]


@pytest.fixture
def ws_setup(setup_with, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    setup = setup_with({"NUMI_TEST_WORKSPACE": str(workspace)})
    setup.workspace = workspace
    return setup


def send(sock, content, request_id):
    sock.send(type="send", request_id=request_id, content=content)
    return sock.until("turn_start")["turn_id"]


def test_edited_arguments_must_be_a_json_object(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("ok")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    ask = sock.until("approval_required")
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow", arguments="[1, 2]")
    assert "JSON object" in sock.until("error")["message"]
    # Still waiting: the refusal answered nothing.
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    assert sock.until("turn_end")["status"] == "completed"


def test_policies_deny_or_allow_without_asking(setup):
    chat = setup.chat(title="t")
    r = setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "guarded", "policy": "deny"})
    assert r.status == 200, r
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("ok")])
    sock = setup.socket(chat)
    send(sock, "one", "r1")
    assert sock.until("turn_end")["status"] == "completed"
    assert not sock.of("approval_required")
    # A denied tool is not offered at all (CONTRACT §15): the call is answered as an unknown tool's.
    assert "guarded" not in [t["function"]["name"] for t in setup.fake.requests[0].body.get("tools", [])]
    assert "no tool named 'guarded'" in setup.fake.requests[1].body["messages"][-1]["content"]
    # A default for every chat; the chat's own policy, once cleared, no longer hides it.
    assert setup.api.put("/api/approvals/policy", {"tool": "guarded", "policy": "allow"}).status == 200
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "guarded", "policy": None}).status == 200
    setup.fake.enqueue([S.tool_call(0, "c2", "guarded", '{"text": "y"}')], [S.text("ok")])
    send(sock, "two", "r2")
    sock.until("turn_end", turn_id=sock.of("turn_start")[-1]["turn_id"])
    assert not sock.of("approval_required")
    assert [e["ok"] for e in sock.of("tool_end")] == [False, True]
    listed = setup.api.get(f"/api/approvals?chat_id={chat}").body
    assert listed["default"] == {"guarded": "allow"} and listed["chat"] == {}
    tools = {t["name"]: t["needs_approval"] for t in listed["tools"]}
    assert tools["guarded"] is True and tools["upper"] is False


def test_policy_input_is_checked(setup):
    bad = setup.api.put("/api/approvals/policy", {"tool": "guarded", "policy": "sometimes"})
    assert bad.status == 422 and "policy" in bad.body["error"]["fields"]
    assert setup.api.put("/api/approvals/policy", {"tool": "", "policy": "ask"}).status == 422
    assert setup.api.put("/api/approvals/policy", {"chat_id": "c_nope", "tool": "x", "policy": "ask"}).status == 404


def test_a_shell_rule_is_one_exact_command_and_chained_lines_never_ride_it(ws_setup):
    setup = ws_setup
    sentinel = setup.workspace.parent / "sentinel.txt"
    sentinel.write_text("untouched")
    chat = setup.chat(title="t")
    setup.fake.enqueue(shell_call("c1", "echo hello"), [S.text("ok")],
                       shell_call("c2", "echo hello"), [S.text("ok")],
                       shell_call("c3", f"echo hello; echo gone > {sentinel}"), [S.text("ok")],
                       shell_call("c4", "echo hello -n"), [S.text("ok")])
    sock = setup.socket(chat)
    send(sock, "one", "r1")
    ask = sock.until("approval_required")
    assert ask["can_always"] is True
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    assert "hello" in sock.until("tool_end")["output"]
    sock.until("turn_end")
    rules = setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"]
    assert rules == [{"chat_id": chat, "tool": "shell", "command": "echo hello"}]

    # The same command again runs without asking.
    turn = send(sock, "two", "r2")
    sock.until("turn_end", turn_id=turn)
    assert len(sock.of("approval_required")) == 1

    # A chained line asks, offers no "always", and an allow_always leaves no rule behind.
    turn = send(sock, "three", "r3")
    ask = sock.until("approval_required", turn_id=turn)
    assert ask["can_always"] is False
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny", reason="no")
    sock.until("turn_end", turn_id=turn)
    assert sentinel.read_text() == "untouched"
    # Nor does a different command with the same start.
    turn = send(sock, "four", "r4")
    ask = sock.until("approval_required", turn_id=turn)
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    sock.until("turn_end", turn_id=turn)
    rules = setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"]
    assert [r["command"] for r in rules] == ["echo hello", "echo hello -n"]

    # Rules are removable; a removed one asks again.
    gone = setup.api.request("DELETE", "/api/approvals/rules", {"chat_id": chat, "rule": rules[0]})
    assert gone.status == 204
    assert setup.api.request("DELETE", "/api/approvals/rules", {"chat_id": chat, "rule": rules[0]}).status == 404
    setup.fake.enqueue(shell_call("c5", "echo hello"), [S.text("ok")])
    turn = send(sock, "five", "r5")
    ask = sock.until("approval_required", turn_id=turn)
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=turn)


def test_stop_ends_a_slow_command_and_its_children(ws_setup):
    setup = ws_setup
    chat = setup.chat(title="t")
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "allow"}).status == 200
    marker = setup.workspace / "started"
    setup.fake.enqueue(shell_call("c1", f"touch {marker.name}; sleep 60 & sleep 60"), [S.text("after")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    sock.until("tool_start")
    deadline = time.monotonic() + 15
    while not marker.exists():  # the command's own sign that it runs
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    stopped = time.monotonic()
    sock.send(type="stop")
    end = sock.until("turn_end")
    assert end["status"] == "cancelled" and time.monotonic() - stopped < 10
    tool = [m for m in setup.messages(chat) if m["role"] == "tool"][0]
    assert "stopped" in tool["content"]


def test_a_pending_approval_survives_a_reconnect(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "later"}')], [S.text("ok")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    ask = sock.until("approval_required")
    last_seen = ask["event_id"]
    sock.close()
    # A new socket resuming from before the question hears it again, and can answer it.
    again = setup.socket(chat)
    again.send(type="resume", after_event_id=last_seen - 1, epoch=ask.get("epoch"))
    repeat = again.until("approval_required")
    assert repeat["approval_id"] == ask["approval_id"]
    again.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    assert again.until("turn_end")["status"] == "completed"
    assert json.loads(again.of("tool_end")[0]["output"]) == {"echo": "later"}


def test_an_approval_pending_when_the_process_dies_leaves_an_interrupted_turn(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("Let me check."), S.tool_call(0, "c1", "guarded", '{"text": "x"}')])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    sock.until("approval_required")
    setup.server.kill9()
    setup.server.start()
    setup.api = setup.server.api()
    asked = [m for m in setup.messages(chat) if m["role"] == "assistant"][-1]
    assert asked["status"] == "interrupted" and asked["tool_calls"][0]["name"] == "guarded"
    assert asked["content"] == "Let me check."
    # Continue goes on: the model is told the call never ran.
    setup.fake.enqueue([S.text("It did not run; shall I try again?")])
    sock = setup.socket(chat)
    sock.send(type="continue")
    assert sock.until("turn_end")["status"] == "completed"
    sent = setup.fake.requests[-1].body["messages"]
    assert sent[-1]["role"] == "tool" and "did not run" in sent[-1]["content"]


def test_approvals_routes_refuse_unknown_chats_and_malformed_rules(setup):
    assert setup.api.get("/api/approvals?chat_id=c_nope").status == 404
    chat = setup.chat(title="t")
    for body in ({"chat_id": chat}, {"chat_id": chat, "rule": "shell"}, {"rule": {"tool": "shell"}},
                 {"chat_id": chat, "rule": {"command": "ls"}}):
        r = setup.api.request("DELETE", "/api/approvals/rules", body)
        assert r.status == 422 and "rule" in r.body["error"]["fields"], (body, r.body)
    r = setup.api.request("DELETE", "/api/approvals/rules", {"chat_id": "c_nope", "rule": {"tool": "shell"}})
    assert r.status == 404
