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
from tests.e2e.ui import CHROMIUM, open_chat, shot, sign_in
from tests.fakeprovider import script as S
from tests.research_fakes import INJECTION, FakeWeb, page_html, trust_local, use_searxng

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

EVIL = '<img src=x onerror="window.__pwned=1">'


def test_research_progress_and_report_render_as_text(setup, page):
    web = FakeWeb({"1": page_html("1", INJECTION), "2": page_html("2", "<p>Plain facts.</p>")}, per_query=2)
    try:
        use_searxng(setup.api, web.url)
        trust_local(setup.api, web.url)  # the fake pages are on this computer
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
        question = page.locator("article.msg.user").last.locator(".msg-meta")
        expect(question).to_have_text("You · Research")
        shot(page, "research-02-done")
        # Nothing from the web became an element or ran.
        assert page.locator("article.msg img, .research-progress img").count() == 0
        assert page.evaluate("window.__pwned") is None
        assert [m["role"] for m in setup.messages(chat)] == ["user", "assistant"]  # no tool ran
        # The question stays marked as a research question once the history is read again.
        page.reload()
        expect(question).to_have_text("You · Research")
    finally:
        web.close()


def test_research_limits_in_settings_are_saved_and_out_of_range_is_said(page, setup):
    sign_in(page, setup.server, "/settings/research")
    section = page.locator("#settings-research")
    expect(section.get_by_role("heading", name="Research")).to_be_visible()
    minutes, searches, pages = (section.get_by_label(name) for name in ("Time limit (minutes)", "Searches", "Pages read"))
    expect(minutes).to_have_value("10")
    expect(searches).to_have_value("8")
    expect(pages).to_have_value("12")

    def saved() -> dict:
        return setup.api.get("/api/settings").body["research"]

    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        pages.fill("5")
        pages.press("Tab")
    assert saved() == {"max_minutes": 10, "max_searches": 8, "max_pages": 5}
    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        minutes.fill("2.5")
        minutes.press("Tab")
    assert saved()["max_minutes"] == 2.5
    # Out of range: said under the field, nothing sent, the saved value kept.
    sent = []
    page.on("request", lambda r: sent.append(r) if r.method == "PATCH" else None)
    searches.fill("0")
    searches.press("Tab")
    expect(section.locator("#set-research-searches-error")).to_have_text("Searches: a whole number from 1 to 50.")
    expect(searches).to_have_attribute("aria-invalid", "true")
    searches.fill("2.5")
    searches.press("Tab")
    expect(section.locator("#set-research-searches-error")).to_have_text("Searches: a whole number from 1 to 50.")
    assert sent == [] and saved()["max_searches"] == 8
    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        searches.fill("3")
        searches.press("Tab")
    expect(section.locator("#set-research-searches-error")).to_have_text("")
    expect(searches).not_to_have_attribute("aria-invalid", "true")
    assert saved() == {"max_minutes": 2.5, "max_searches": 3, "max_pages": 5}
    page.reload()
    expect(pages).to_have_value("5")
    expect(minutes).to_have_value("2.5")
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, ["#settings-research .hint", "#settings-research label"]) == [], theme
    page.emulate_media(color_scheme="light")
    shot(page, "research-03-settings")


def test_a_research_that_found_nothing_in_time_goes_on_with_continue(setup, page):
    web = FakeWeb({"1": page_html("1", "<p>Plain facts.</p>")}, per_query=1)
    try:
        use_searxng(setup.api, web.url)
        assert setup.api.patch("/api/settings", {"research": {"max_minutes": 0.05}}).status == 200  # 3 s
        web.hold()
        setup.fake.enqueue([S.text(json.dumps(["numi"]))])
        chat = setup.chat(title="Research limit")
        open_chat(page, setup.server, chat, "Research limit")
        page.locator(".composer-input").fill("What is Numi?")
        page.get_by_role("button", name="Research: search the web and write a cited report").click()
        assert web.waiting.acquire(timeout=15)
        notice = page.locator(".notice.error")
        expect(notice).to_contain_text("reached its 0.05-minute limit", timeout=15000)
        expect(notice).to_contain_text("Continue to research again")
        web.release()
        assert setup.api.patch("/api/settings", {"research": {"max_minutes": 10}}).status == 200
        setup.fake.enqueue([S.text(json.dumps(["numi"]))], [S.text("Found it [1].")])
        notice.get_by_role("button", name="Continue").click()
        expect(page.locator("article.msg.assistant").last).to_contain_text("Found it")
        expect(page.locator(".notice.error")).to_have_count(0)
        assert [m["role"] for m in setup.messages(chat)] == ["user", "assistant"]
    finally:
        web.close()
