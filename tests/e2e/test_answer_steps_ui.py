"""A reply whose model called tools and then answered reads as one answer: one label, the
steps (tool rows) inside it, one set of actions and the turn's token total — live and after
a reload; the header's total says it counts the whole chat."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def test_tool_steps_and_the_answer_are_one_answer(page, setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    chat = setup.chat(title="E2E one answer")
    setup.fake.enqueue([S.text("Let me ask."), S.tool_call(0, "call_1", "guarded", '{"text": "x"}'), S.usage(100, 10)],
                       [S.text("Here is the answer."), S.usage(150, 20)])
    open_chat(page, setup.server, chat, "E2E one answer")
    send(page, "Go")
    page.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Here is the answer.")

    def check():
        steps = replies(page)
        expect(steps).to_have_count(2)
        expect(steps.nth(0)).to_have_attribute("data-step", "first")
        expect(steps.nth(1)).to_have_attribute("data-step", "last")
        # One label: the first step's; the last step's is there only for screen readers.
        expect(page.locator("article.msg.assistant .msg-meta:visible")).to_have_count(1)
        expect(steps.nth(0).locator("details.tool-call")).to_have_count(1)
        # One set of actions, under the answer; one token total, the turn's (100+150 → 10+20).
        expect(page.locator("article.msg.assistant").get_by_role("button", name="Copy reply")).to_have_count(1)
        expect(steps.nth(0).locator(".msg-usage .chip")).to_have_count(0)
        expect(steps.nth(1).locator(".msg-usage .chip").first).to_have_text("250 → 30 tok")
        assert "2 steps" in steps.nth(1).locator(".msg-usage .chip").first.get_attribute("title")
        # Drawn as one block: no gap between the steps.
        gap = page.evaluate("""() => { const [a, b] = document.querySelectorAll('article.msg.assistant');
                                        return b.getBoundingClientRect().top - a.getBoundingClientRect().bottom; }""")
        assert gap < 4, gap
        expect(page.locator(".chat-header .chat-usage")).to_have_text("280 tokens in this chat")

    check()
    page.reload()
    wait_chat_ready(page, "E2E one answer")
    check()
