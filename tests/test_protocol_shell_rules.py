"""An "allow always" shell rule through the real server covers the exact command approved:
ASCII spaces, tabs and newlines around it aside, any other character makes another command."""
from __future__ import annotations

import json

from tests.fakeprovider import script as S
from tests.test_protocol_approvals import shell_call, ws_setup  # noqa: F401 (ws_setup is a fixture)


def first_of(sock, *kinds: str) -> dict:
    """The next event of one of `kinds`: whether a call asked or ran straight away."""
    while True:
        event = sock.recv()
        if event["type"] in kinds:
            return event


def test_an_always_rule_asks_again_for_the_command_with_a_no_break_space(ws_setup):
    setup = ws_setup
    chat = setup.chat(title="t")
    setup.fake.enqueue(shell_call("c1", "echo always-ok"), [S.text("ok")],
                       shell_call("c2", " echo always-ok\t\n"), [S.text("ok")],
                       shell_call("c3", "echo always-ok\u00a0"), [S.text("ok")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="one")
    ask = sock.until("approval_required")
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    assert sock.until("tool_end", call_id="c1")["ok"]
    sock.until("turn_end")
    rules = setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"]
    assert rules == [{"chat_id": chat, "tool": "shell", "command": "echo always-ok"}]

    # ASCII spaces, tabs and newlines around the approved command: the same command, no question.
    sock.send(type="send", request_id="r2", content="two")
    ran = first_of(sock, "approval_required", "tool_start")
    assert ran["type"] == "tool_start" and ran["call_id"] == "c2", ran
    sock.until("turn_end")

    # A no-break space is part of the last argument the shell gets: another command, so it asks,
    # and "always" is not offered for a line that looks like the approved one.
    sock.send(type="send", request_id="r3", content="three")
    ask = first_of(sock, "approval_required", "tool_start")
    assert ask["type"] == "approval_required" and ask["call_id"] == "c3", ask
    assert json.loads(ask["arguments"])["command"] == "echo always-ok\u00a0"
    assert ask["can_always"] is False
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    assert sock.until("tool_end", call_id="c3")["ok"]
    sock.until("turn_end")
    rules = setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"]
    assert [r["command"] for r in rules] == ["echo always-ok"]  # no rule was added for it
