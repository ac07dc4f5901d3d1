"""Settings → Web fetch in a real Chromium: the local sites the person trusts are saved one a line,
and an address the server refuses is said under the field while the saved list stays."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_a11y import low_contrast
from tests.e2e.ui import CHROMIUM, sign_in

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def test_trusted_local_sites_are_saved_and_a_bad_one_is_said(page, setup):
    sign_in(page, setup.server, "/settings/fetch")
    section = page.locator("#settings-fetch")
    expect(section.get_by_role("heading", name="Web fetch")).to_be_visible()
    field = section.get_by_label("Local sites you trust")
    expect(field).to_have_value("")

    def saved() -> list:
        return setup.api.get("/api/settings").body["web_fetch"]["allow_private"]

    def patched(r) -> bool:
        return r.url.endswith("/api/settings") and r.request.method == "PATCH"

    with page.expect_response(patched):
        field.fill("HTTP://Wiki.LAN:80\n\n  http://127.0.0.1:8123  ")
        field.press("Tab")
    assert saved() == ["http://wiki.lan", "http://127.0.0.1:8123"]
    expect(field).to_have_value("http://wiki.lan\nhttp://127.0.0.1:8123")

    with page.expect_response(patched):
        field.fill("http://wiki.lan/docs")
        field.press("Tab")
    error = section.locator("#set-web-fetch-private-error")
    expect(error).to_contain_text("without a path")
    expect(field).to_have_attribute("aria-invalid", "true")
    assert saved() == ["http://wiki.lan", "http://127.0.0.1:8123"]  # refused: the list is kept

    with page.expect_response(patched):
        field.fill("http://nas.lan:5000")
        field.press("Tab")
    expect(error).to_have_text("")
    assert saved() == ["http://nas.lan:5000"]
    page.reload()
    expect(field).to_have_value("http://nas.lan:5000")
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, ["#settings-fetch .hint", "#settings-fetch label"]) == [], theme
