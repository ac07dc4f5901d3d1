"""Settings in sections with a search, the import file picker, and the first-run screen's
New chat, starting kind and success card — in a real Chromium against the real server."""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, shot, sign_in

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def nav(page):
    return page.get_by_role("navigation", name="Settings sections")


def panel(page, title: str):
    return page.get_by_role("region", name=title, exact=True)


def test_sections_open_from_the_address_and_the_nav(page, setup):
    sign_in(page, setup.server, "/settings/mcp")
    expect(panel(page, "MCP servers")).to_be_visible()
    expect(panel(page, "Providers")).to_be_hidden()
    expect(nav(page).get_by_role("link", name="MCP servers")).to_have_attribute("aria-current", "page")
    # By keyboard: a section's link, then Enter.
    nav(page).get_by_role("link", name="Appearance").focus()
    page.keyboard.press("Enter")
    expect(panel(page, "Appearance").get_by_label("Theme")).to_be_visible()
    expect(panel(page, "MCP servers")).to_be_hidden()
    expect(page).to_have_url(re.compile(r"#/settings/appearance$"))
    # The address reopens that section after a reload.
    page.reload()
    expect(panel(page, "Appearance")).to_be_visible()
    expect(nav(page).get_by_role("link", name="Appearance")).to_have_attribute("aria-current", "page")
    expect(nav(page).get_by_role("link")).to_have_text(
        ["Providers", "Models", "Long conversations", "Tools & approvals", "MCP servers", "Web search", "Web fetch",
         "Research", "Images", "Voice", "Knowledge", "Personal", "Memory", "Prompts", "Appearance", "Data", "Advanced"])


def test_search_shows_matching_rows_of_every_section_and_says_when_none(page, setup):
    sign_in(page, setup.server, "/settings")
    expect(panel(page, "Providers").locator(".card.provider")).to_contain_text("Fake Local")
    search = page.get_by_role("searchbox", name="Search settings")
    search.fill("network")
    tools = panel(page, "Tools & approvals")
    expect(tools.get_by_label("Shell commands may use the network")).to_be_visible()
    expect(panel(page, "Providers")).to_be_hidden()
    expect(panel(page, "Appearance")).to_be_hidden()
    # Rows of two sections at once: the provider's card and the model's, both naming "Fake".
    search.fill("fake local")
    expect(panel(page, "Providers").locator(".card.provider")).to_be_visible()
    expect(panel(page, "Models").locator(".card.model")).to_be_visible()
    expect(panel(page, "Models").get_by_label("Default model for new chats")).to_be_visible()
    expect(tools).to_be_hidden()
    # A section's own name shows it whole.
    search.fill("appearance")
    expect(panel(page, "Appearance").get_by_label("Theme")).to_be_visible()
    search.fill("zzqx")
    expect(page.locator(".s-none")).to_have_text("No setting matches “zzqx”. Try another word, or pick a section.")
    for title in ("Providers", "Models", "Long conversations", "Tools & approvals", "MCP servers", "Appearance", "Data",
                  "Advanced"):
        expect(panel(page, title)).to_be_hidden()
    shot(page, "settings-search-none", dark=False)
    # Escape empties the box: the section that was open is back.
    search.press("Escape")
    expect(search).to_have_value("")
    expect(page.locator(".s-none")).to_have_text("")
    expect(panel(page, "Providers")).to_be_visible()
    expect(panel(page, "Models")).to_be_hidden()


def export_file(tmp_path, title: str):
    doc = {"format": "numi-export", "version": 1, "chats": [{
        "title": title, "created_at": "2026-01-02T03:04:05.000Z", "updated_at": "2026-01-02T03:05:00.000Z",
        "messages": [{"role": "user", "content": "Hello", "created_at": "2026-01-02T03:04:05.000Z"}]}]}
    path = tmp_path / "numi-export.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_import_picker_is_a_button_that_opens_the_real_file_input(page, setup, tmp_path):
    path = export_file(tmp_path, "Picked with the button")
    sign_in(page, setup.server, "/settings/data")
    data = panel(page, "Data")
    button = data.get_by_role("button", name="Choose a file to import…")
    expect(button).to_be_visible()
    expect(data.locator(".file-name")).to_have_text("No file chosen")
    # The bare input is not what is seen: it has no size to click on.
    box = page.locator("#import-file").bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    with page.expect_file_chooser() as chooser:
        button.click()
    chooser.value.set_files(str(path))
    expect(data.locator(".file-name")).to_have_text("numi-export.json")
    expect(page.locator(".data-status")).to_have_text("Imported 1 chat from numi-export.json.")
    expect(page.locator(".chat-list .chat-item", has_text="Picked with the button")).to_be_visible()
    shot(page, "settings-import-picker", dark=False)


def test_first_run_new_chat_brings_the_person_to_connecting_a_model(page, start_server):
    server = start_server({"NUMI_PROBE_PORTS": ""})
    sign_in(page, server)
    expect(page.locator(".local-list")).to_contain_text("None found")
    form = page.locator("form.provider-form")
    expect(form.get_by_label("Kind")).to_have_value("openai")  # nothing found here: a key for OpenAI
    page.get_by_role("button", name="New chat (Ctrl+N)").click()
    expect(page.get_by_role("heading", name="Welcome to Numi")).to_be_visible()
    expect(page.locator(".firstrun-note")).to_have_text(
        "A chat needs a model first: connect one here, or use a server found on this computer above. Then New chat opens a chat.")
    expect(form.get_by_label("Kind")).to_be_focused()
    expect(page.locator(".composer-input")).to_have_count(0)


def test_first_run_form_starts_on_the_kind_found_on_this_computer(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": f"Fake={fake.port}"})
    sign_in(page, server)
    expect(page.locator(".local-list .card", has_text="Fake")).to_be_visible()
    form = page.locator("form.provider-form")
    expect(form.get_by_label("Kind")).to_have_value("openai_compatible")
    expect(form.get_by_label("API address")).to_have_attribute("placeholder", fake.base_url)
    # With a server found, New chat goes to its "Use this".
    page.get_by_role("button", name="New chat (Ctrl+N)").click()
    expect(page.locator(".local-list").get_by_role("button", name="Use this")).to_be_focused()


def test_first_run_success_card_has_no_empty_band_and_the_form_is_cleared(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": ""})
    sign_in(page, server)
    form = page.locator("form.provider-form")
    form.get_by_label("Kind").select_option("openai_compatible")
    form.get_by_label("Name").fill("My Fake")
    form.get_by_label("API address").fill(fake.base_url)
    form.get_by_label("API key").fill("sk-test-not-real")
    form.get_by_role("button", name="Connect").click()
    heading = page.get_by_role("heading", name="My Fake is connected")
    expect(heading).to_be_visible()
    card = page.locator(".firstrun-body .card", has=heading)
    # The heading starts at the card's padding (0.8rem), not below a page heading's margin.
    gap = page.evaluate("([c, h]) => h.getBoundingClientRect().top - c.getBoundingClientRect().top",
                        [card.element_handle(), heading.element_handle()])
    assert gap <= 16, f"{gap}px of empty band above the success card's heading"
    bottom = page.evaluate("(c) => { const r = c.getBoundingClientRect(); const last = c.lastElementChild.getBoundingClientRect(); return r.bottom - last.bottom; }",
                           card.element_handle())
    assert bottom <= 16, f"{bottom}px of empty band below the success card's last control"
    expect(form.get_by_label("Kind")).to_have_value("openai")
    expect(form.get_by_label("Name")).to_have_value("OpenAI")
    expect(form.get_by_label("API address")).to_have_value("")
    expect(form.get_by_label("API key")).to_have_value("")
    shot(page, "first-run-success-card", dark=False)


def test_settings_add_provider_form_is_cleared_after_adding(page, setup, fake):
    sign_in(page, setup.server, "/settings/providers")
    add = panel(page, "Providers").locator("details", has_text="Add a provider")
    add.locator("summary").click()
    form = add.locator("form.provider-form")
    form.get_by_label("Name").fill("Second Fake")
    form.get_by_label("API address").fill(fake.base_url)
    form.get_by_role("button", name="Add provider").click()
    expect(form.locator(".form-status")).to_have_text(re.compile(r"^Added"))
    expect(panel(page, "Providers").locator(".card.provider", has_text="Second Fake")).to_be_visible()
    expect(form.get_by_label("Name")).to_have_value("")
    expect(form.get_by_label("API address")).to_have_value("")
