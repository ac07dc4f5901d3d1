"""A call to a tool the chat's mode does not offer (write_file in plan mode) reads as "not
offered in Plan mode": a neutral row, not a red "failed" naming a tool that does not exist —
live and from history."""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def test_a_tool_plan_mode_holds_back_reads_as_not_offered(page, setup, tmp_path):
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    chat = setup.chat(title="E2E held back", workspace=str(setup.workspace), mode="plan")
    setup.fake.enqueue([S.tool_call(0, "call_w", "write_file", json.dumps({"path": "new.txt", "content": "x"}))],
                       S.reply("I will put it in the plan."))
    open_chat(page, setup.server, chat, "E2E held back")
    send(page, "Write new.txt")
    expect(replies(page).last.locator(".msg-body")).to_have_text("I will put it in the plan.")

    def check():
        row = page.locator("details.tool-call").filter(has_text="write_file")
        expect(row.locator(".tool-state")).to_have_text("not offered in Plan mode")
        expect(row).to_have_attribute("data-state", "off")
        # Neutral: the badge is not the danger colour a failure has.
        colours = row.locator(".tool-state").evaluate(
            "(el) => [getComputedStyle(el).color, getComputedStyle(document.documentElement).getPropertyValue('--danger').trim()]")
        assert colours[0] != "rgb(179, 38, 30)", colours
        row.locator("summary").click()
        expect(row.locator(".tool-out")).to_contain_text("Not offered in Plan mode.")
        expect(row.locator(".tool-out")).not_to_contain_text("no tool named")

    check()
    assert not (setup.workspace / "new.txt").exists()
    page.reload()
    wait_chat_ready(page, "E2E held back")
    check()
