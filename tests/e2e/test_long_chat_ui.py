"""A long chat in the window (issue 32 item 1): 300 short messages on a 128 000-token window
are no red "cannot fit"; only a chat that outgrew its window says its oldest messages are left
out, and the meter's name reads as sentences. Real Chromium, real server, fake provider."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat
from tests.long_chats import long_chat

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def test_a_long_chat_that_fits_is_green_and_one_that_outgrew_its_window_says_so(page, setup):
    chat = long_chat(setup, 150, title="Long talk")
    open_chat(page, setup.server, chat, "Long talk")
    meter, button, warning = page.locator(".context-meter"), page.locator(".meter-btn"), page.locator(".context-warning")
    expect(meter).to_be_visible()
    expect(meter).to_have_attribute("data-level", "ok")
    expect(warning).to_be_hidden()
    name = button.get_attribute("aria-label")
    assert name.endswith("Show what it is made of.") and ".." not in name, name
    meter.hover()
    expect(page.locator(".meter-notes")).not_to_contain_text("left out")

    # The same chat on a 2 000-token window with automatic summaries off: it is over, and the
    # sentence says what happened (the oldest messages go), not that the next one cannot fit.
    assert setup.api.patch("/api/settings", {"compaction": {"auto": False}}).status == 200
    assert setup.api.patch(f"/api/models/{setup.model['id']}",
                           {"context_window": 2000, "max_output_tokens": 200}).status == 200
    page.reload()
    expect(meter).to_have_attribute("data-level", "over")
    expect(warning).to_be_visible()
    expect(warning.locator("span")).to_have_text(
        "The whole chat no longer fits the model's context window, so the oldest messages are left out. "
        "Summarize the chat to keep them, or start a new one.")
    name = button.get_attribute("aria-label")
    assert ".." not in name and "cannot fit" not in name, name
