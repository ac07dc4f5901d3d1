"""A plan shows that it was executed: "Execute plan" gives way to "Executing…" while its
reply runs and "Executed" after (a reload too), and an unchanged plan is not offered again."""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, send, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

STEPS = [{"text": "Read the notes", "status": "pending"}, {"text": "Write the summary", "status": "pending"}]


def test_execute_plan_becomes_executing_then_executed(page, setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    chat = setup.chat(title="E2E executed", mode="plan")
    setup.fake.enqueue([S.text("My plan."), S.tool_call(0, "p1", "update_plan", json.dumps({"steps": STEPS}))],
                       S.reply("Shall I go ahead?"))
    open_chat(page, setup.server, chat, "E2E executed")
    send(page, "Plan it")
    card = page.locator("section.plan-card")
    execute = card.get_by_role("button", name="Execute plan")
    expect(execute).to_be_visible()

    # The model answers without touching the plan; its reply waits until released.
    setup.fake.enqueue([S.hang(), S.text("I could not start.")])
    execute.click()
    setup.fake.wait_hanging()
    expect(card.get_by_role("status")).to_have_text("Executing…")
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)
    setup.fake.release()
    expect(page.locator("article.msg.assistant .msg-body").last).to_have_text("I could not start.")
    expect(card.get_by_role("status")).to_have_text("Executed")
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)

    page.reload()
    wait_chat_ready(page, "E2E executed")
    expect(page.locator("section.plan-card").get_by_role("status")).to_have_text("Executed")
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)
