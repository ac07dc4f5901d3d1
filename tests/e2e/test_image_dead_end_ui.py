"""The image dead end (issue 32 item 10), in a real Chromium: with no model that can see
images, attaching one says so and points to Settings → Models (no picker with nothing to
pick), and sending it anyway is refused before any turn, with the same sentence."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_attachments import chips, choose_files
from tests.e2e.ui import CHROMIUM, open_chat, send
from tests.sample_files import png

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

SENTENCE = ("No model here can see images, so blue.png cannot be sent. Turn vision on for a model "
            "that can see them in Settings → Models, or remove the image.")


def test_no_model_sees_images_says_so_offers_settings_and_refuses_the_send(page, setup):
    chat = setup.chat(title="E2E dead end")  # the only model does not see images
    open_chat(page, setup.server, chat, "E2E dead end")
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": png()})
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    warning = page.locator(".composer .caps-warning")
    expect(warning).to_contain_text(SENTENCE)
    expect(warning.get_by_role("button", name="Switch model")).to_have_count(0)
    link = warning.get_by_role("link", name="Open Settings → Models")
    expect(link).to_have_attribute("href", "#/settings/models")

    # Sending anyway: refused with the same sentence; the draft and the image stay, nothing is saved.
    send(page, "What is in this picture?")
    expect(page.locator(".composer")).to_contain_text(SENTENCE)
    expect(page.locator(".composer-input")).to_have_value("What is in this picture?")
    expect(chips(page)).to_have_count(1)
    expect(page.locator("article.msg")).to_have_count(0)
    assert setup.messages(chat) == [] and not setup.fake.requests

    link.click()
    expect(page.get_by_role("region", name="Models", exact=True)).to_be_visible()
