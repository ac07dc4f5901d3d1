"""What a model cannot do, said before it bites: an image for a model without vision, a workspace
chat on a model with tools off, and a refused tool call naming the setting — in a real Chromium."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_attachments import choose_files, chips
from tests.e2e.ui import CHROMIUM, open_chat, send
from tests.fakeprovider import script as S
from tests.sample_files import png

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


def test_vision_failure_shows_once(page, setup):
    chat = setup.chat(title="E2E no vision")  # the fixture's model is not marked as seeing images
    open_chat(page, setup.server, chat, "E2E no vision")
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": png()})
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    send(page, "What is in this picture?")
    expect(page.locator("article.msg.assistant")).to_have_count(1)
    # The failed reply says it, with Retry; no second copy in a notice under it (a screen
    # reader still hears it once, from the notice slot's hidden live region).
    reply_error = page.locator("article.msg.assistant .msg-error")
    expect(reply_error).to_contain_text("Fake cannot see images")
    expect(page.locator(".notice-slot .notice")).to_have_count(0)
    expect(page.locator(".notice-slot [role=alert]")).to_contain_text("cannot see images")
