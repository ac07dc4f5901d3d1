"""Signing in and keys, as a person sees them in real Chromium: the one-time address, the
signed-out screen, and where the first-run key field says a key will be kept."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, sign_in
from tests.numi_client import ServerProcess
from tests.sandbox_checks import SecretService

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

SIGNED_OUT = "You are signed out of Numi: open it from its window, or the address numi --headless printed."


def assert_signed_out_screen(page) -> None:
    """One card, centred, saying what to do; nothing of the app half-drawn behind it."""
    card = page.locator(".signed-out-card")
    expect(card).to_have_text("Signed out" + SIGNED_OUT)
    assert page.locator(".shell").count() == 0 and page.locator(".composer-input").count() == 0
    box, view = card.bounding_box(), page.viewport_size
    assert abs((box["x"] + box["width"] / 2) - view["width"] / 2) < 2
    assert abs((box["y"] + box["height"] / 2) - view["height"] / 2) < 2
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth "
                         "&& document.documentElement.scrollHeight <= innerHeight")


def test_a_page_without_sign_in_shows_one_laid_out_screen(page, server):
    page.goto(f"http://127.0.0.1:{server.port}/")
    assert_signed_out_screen(page)


def test_the_one_time_address_signs_the_browser_in_once(browser, page, server):
    base = f"http://127.0.0.1:{server.port}"
    url = server.api().post("/api/sign-in-links").body["url"]
    page.goto(url)
    page.wait_for_url(base + "/")
    expect(page.locator(".firstrun h1")).to_have_text("Welcome to Numi")  # signed in: its data was read
    assert page.locator(".signed-out").count() == 0
    other = browser.new_context().new_page()  # another browser profile: the address is spent
    answer = other.goto(url)
    assert answer.status == 401
    expect(other.locator(".signed-out")).to_contain_text("already used or has expired")
    other.context.close()


def test_the_key_field_says_keys_stay_for_this_run_without_a_keyring(page, server):
    sign_in(page, server)
    hint = page.locator(".firstrun .provider-form .hint[data-key-kept]")
    expect(hint).to_have_text("Kept for this run only, because no system keyring (Secret Service) was found. "
                              "Local servers usually need none.")
    page.goto(f"http://127.0.0.1:{server.port}/#/settings")
    notice = page.locator(".keyring-notice")
    expect(notice).to_contain_text("gnome-keyring")
    notice.get_by_role("button", name="Check again").click()
    expect(page.locator(".toast")).to_contain_text("Looked again: no system keyring (Secret Service) was found.")


def test_the_key_field_names_the_system_keyring_when_there_is_one(page, tmp_path):
    secrets = SecretService(tmp_path / "secret-service")
    server = ServerProcess(tmp_path / "data")
    server.env.pop("PYTHON_KEYRING_BACKEND", None)  # keyring's own choice: the Secret Service above
    server.env["DBUS_SESSION_BUS_ADDRESS"] = secrets.address
    try:
        server.start()
        assert server.api().get("/api/settings").body["keyring"]["available"] is True
        sign_in(page, server)
        expect(page.locator(".firstrun .provider-form .hint[data-key-kept]")).to_have_text(
            "Kept in the system keyring, never in Numi's files. Local servers usually need none.")
    finally:
        server.stop()
        secrets.stop()
