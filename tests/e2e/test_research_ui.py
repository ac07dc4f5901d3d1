"""Research in a real Chromium: the composer's Research action starts a research turn, the
progress strip shows the phase and counts live, and text from the web (a planned query, a
page, the report quoting it) shows as text, never as markup. Waits are on DOM states and on
the fakes' own events (a held search, a parked report): no sleeps."""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_a11y import low_contrast
from tests.e2e.ui import CHROMIUM, open_chat, shot
from tests.fakeprovider import script as S
from tests.research_fakes import INJECTION, FakeWeb, page_html, use_searxng

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

EVIL = '<img src=x onerror="window.__pwned=1">'


def test_research_progress_and_report_render_as_text(setup, page):
    web = FakeWeb({"1": page_html("1", INJECTION), "2": page_html("2", "<p>Plain facts.</p>")}, per_query=2)
    try:
        use_searxng(setup.api, web.url)
        setup.fake.enqueue([S.text(json.dumps([f"numi {EVIL}"]))],
                           [S.text(f"Numi keeps chats locally [1]. {EVIL} **bold** [2]"), S.hang(), S.text(" Done.")])
        chat = setup.chat(title="Research UI")
        open_chat(page, setup.server, chat, "Research UI")
        web.hold()
        page.locator(".composer-input").fill("What is Numi?")
        page.get_by_role("button", name="Research: search the web and write a cited report").click()
        strip = page.locator(".research-progress")
        assert web.waiting.acquire(timeout=15)
        expect(strip).to_have_attribute("data-phase", "searching")
        expect(strip.locator(".research-detail")).to_have_text(f" · “numi {EVIL}”")
        web.release()
        setup.fake.wait_hanging()
        expect(strip).to_have_attribute("data-phase", "writing")
        expect(strip.locator(".research-counts")).to_have_text("1 search · 2 sources found · 2 read")
        expect(strip.locator(".research-steps li.current")).to_have_text("Writing the report")
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            assert low_contrast(page, [".research-line", ".research-steps li.done", ".research-steps li.current"]) == [], theme
        page.emulate_media(color_scheme="light")
        shot(page, "research-01-writing")
        setup.fake.release()
        reply = page.locator("article.msg.assistant").last
        expect(reply).to_contain_text("Done.")
        expect(reply.locator("strong")).to_have_text("bold")  # Markdown renders; raw HTML is dropped
        expect(strip).to_have_attribute("data-phase", "done")
        shot(page, "research-02-done")
        # Nothing from the web became an element or ran.
        assert page.locator("article.msg img, .research-progress img").count() == 0
        assert page.evaluate("window.__pwned") is None
        assert [m["role"] for m in setup.messages(chat)] == ["user", "assistant"]  # no tool ran
    finally:
        web.close()
