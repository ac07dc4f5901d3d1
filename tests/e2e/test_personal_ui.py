"""Settings → Personal in a real Chromium against the real server (CONTRACT §12): the person's
instructions, what they say about themself and the date, each saved as it changes and sent first
in the next request's system text."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, sign_in
from tests.sandbox_checks import wait_until

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def test_personal_context_is_edited_in_settings_and_reaches_the_request(page, setup):
    api = setup.api
    chat = setup.chat(title="t")
    sign_in(page, setup.server, "/settings/personal")
    section = page.get_by_role("region", name="Personal", exact=True)
    instructions = section.get_by_label("Instructions for every chat")
    about = section.get_by_label("About me")
    date = section.get_by_label("Tell the model today's date")
    expect(date).not_to_be_checked()  # as the tests' Setup left it
    instructions.fill("Answer in haiku.")
    about.fill("I keep bees. <b>bold</b>")
    date.check()  # moving to it took focus from "About me": both texts were saved on the way
    expect(section.get_by_role("status")).to_have_text("Saved.")
    wait_until(lambda: api.get("/api/settings").body["personal"] == {
        "instructions": "Answer in haiku.", "about": "I keep bees. <b>bold</b>", "date": True}, "the three to be saved")
    system = api.get(f"/api/chats/{chat}/inspect").body["body"]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Answer in haiku.\n\n")
    assert "<about_me>\nI keep bees. <b>bold</b>\n</about_me>" in system["content"]
    assert "\n\nToday is " in system["content"]
    date.uncheck()
    wait_until(lambda: api.get("/api/settings").body["personal"]["date"] is False, "the date to be turned off")
    # A reload shows what is saved; the person's text stays text.
    page.reload()
    expect(instructions).to_have_value("Answer in haiku.")
    expect(about).to_have_value("I keep bees. <b>bold</b>")
    expect(date).not_to_be_checked()
    expect(section.locator("b")).to_have_count(0)
