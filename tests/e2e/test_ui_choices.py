"""The person's display choices — theme, recently used models, folded folders — outlive a
server restart in a fresh browser profile (empty storage, no cookies: what the desktop
window's private mode amounts to at every start), in a real Chromium."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, replies, send, sign_in, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def picker(page):
    return page.locator(".composer .model-picker")


def test_theme_recent_models_and_folded_folders_survive_a_restart(page, browser, setup):
    api = setup.api
    assert api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    seer = api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-seer",
                                    "label": "Seer"}).body
    work = api.post("/api/folders", {"name": "Work"}).body
    filed = setup.chat(title="Filed away", folder_id=work["id"])

    sign_in(page, setup.server)
    # Dark, by the sidebar's switch (the browser itself prefers light).
    page.get_by_role("button", name="Switch light or dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    # The Work folder folded shut.
    toggle = page.get_by_role("button", name="Work", exact=True)
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    # Seer used for a new chat: it becomes the most recent model.
    picker(page).get_by_role("button", name="Model for this chat: Fake").click()
    picker(page).get_by_role("option").filter(has_text="Seer").click()
    setup.fake.enqueue(S.reply("Seen."))
    send(page, "Look")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Seen.")
    wait_until(lambda: api.get("/api/settings").body["ui"] == {
        "theme": "dark", "recent_models": [seer["id"]], "folded_folders": [work["id"]]}, "the choices are saved")

    # A new server process (a new port) and a browser profile that kept nothing.
    setup.server.terminate()
    setup.server.start()
    api = setup.server.api()
    fresh = browser.new_context(viewport={"width": 1100, "height": 760}, color_scheme="light")
    try:
        again = fresh.new_page()
        errors = []
        again.on("pageerror", lambda exc: errors.append(str(exc)))
        base = f"http://127.0.0.1:{setup.server.port}"
        # The theme is in the page the server sends, so the first paint is already dark.
        with again.expect_response(lambda r: r.url == base + "/") as first_page:
            sign_in(again, setup.server)
        assert '<html data-theme="dark" ' in first_page.value.text()
        expect(again.locator("html")).to_have_attribute("data-theme", "dark")
        expect(again.get_by_role("button", name="Work", exact=True)).to_have_attribute("aria-expanded", "false")
        expect(again.locator(f'.chat-list .chat-item[data-id="{filed}"]')).to_have_count(0)
        # Back on the new-chat screen, the picker puts Seer first.
        again.get_by_role("button", name="New chat (Ctrl+N)").click()
        picker(again).get_by_role("button", name="Model for this chat: Fake").click()
        expect(picker(again).get_by_role("option").locator(".model-option-name")).to_have_text(["Seer", "Fake"])
        # Back to light: saved for the next start too.
        again.keyboard.press("Escape")
        again.get_by_role("button", name="Switch light or dark theme").click()
        expect(again.locator("html")).not_to_have_attribute("data-theme", "dark")
        wait_until(lambda: api.get("/api/settings").body["ui"]["theme"] == "light", "the light theme is saved")
        assert not errors, errors
    finally:
        fresh.close()
