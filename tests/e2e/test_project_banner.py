"""The new-chat screen in a folder says what the folder (a project, CONTRACT §12) applies, in a real
Chromium against the real server: its model, mode, temperature, instructions (shown whole on a click, as
text), knowledge bases by name, tools off and memory; an edit of the folder through the API changes the
summary (and moves the new chat's model along); a folder that sets nothing says so, and "Edit folder…"
opens the folder's sheet.

Every wait is on a DOM state (Playwright's auto-waiting `expect`).
"""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_a11y import low_contrast
from tests.e2e.ui import CHROMIUM, shot, sign_in

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
PROMPT = f"Answer like a librarian.\nCite the shelf. {HOSTILE}"


def summary(page):
    return page.locator(".chat-banner .project-summary")


def items(page):
    return summary(page).locator(".project-items > li")


def chat_model(page):
    """The name on the composer's model picker: the model the new chat will use."""
    return page.locator(".composer .model-picker-btn .model-name")


def new_chat_in(page, name: str) -> None:
    page.get_by_role("button", name=f"Options for folder {name}").click()
    page.get_by_role("menuitem", name="New chat in this folder").click()
    expect(page.locator(".folder-chip")).to_have_text(f"In folder “{name}”")


def test_the_new_chat_screen_lists_what_its_folder_applies_and_follows_edits(page, setup, tmp_path):
    api = setup.api
    beta = api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-beta", "label": "Beta"}).body
    gamma = api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-gamma", "label": "Gamma"}).body
    assert api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "shelves.md").write_text("# Shelves\n\nAtlases are under R.\n")
    base = api.post("/api/knowledge", {"name": "Work notes", "paths": [str(notes)]})
    assert base.status == 201, base
    r = api.post("/api/folders", {
        "name": "Library", "model_id": beta["id"], "system_prompt": PROMPT, "mode": "plan",
        "params": {"temperature": 0.3}, "memory": False, "tools_off": ["web_search", "shell", "mcp__git__*"],
        "knowledge_ids": [base.body["id"]]})
    assert r.status == 201, r
    folder = r.body
    assert api.post("/api/folders", {"name": "Bare"}).status == 201

    sign_in(page, setup.server)
    new_chat_in(page, "Library")
    note = page.get_by_role("note")
    expect(note).to_have_count(1)
    expect(note.locator(".project-label")).to_have_text("Project settings:")
    expect(items(page)).to_have_text([
        "model Beta", "Plan mode", "temperature 0.3", f"its instructions ({len(PROMPT)} characters)",
        "knowledge: Work notes", "3 tools off", "memory off"])
    expect(items(page).filter(has_text="tools off")).to_have_attribute("title", "web_search, shell, mcp__git__*")
    expect(chat_model(page)).to_have_text("Beta")
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, [".project-summary .project-label", ".project-items li"]) == [], theme
    page.emulate_media(color_scheme="light")

    # The instructions: a tooltip, and the whole text below on a click, as text (the markup in it stays text).
    toggle = summary(page).get_by_role("button", name=f"its instructions ({len(PROMPT)} characters)")
    expect(toggle).to_have_attribute("title", PROMPT)
    expect(toggle).to_have_attribute("aria-expanded", "false")
    prompt = summary(page).locator(".project-prompt")
    expect(prompt).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(prompt).to_be_visible()
    assert prompt.text_content() == PROMPT
    assert summary(page).locator("img, script").count() == 0
    assert page.evaluate("window.__pwned") is None
    shot(page, "project-banner")

    # An edit made elsewhere (here the API) reaches the open screen: fewer settings, another model.
    r = api.patch(f"/api/folders/{folder['id']}", {"model_id": gamma["id"], "mode": "edit", "system_prompt": "Be brief.",
                                                   "memory": True, "tools_off": ["shell"], "knowledge_ids": [],
                                                   "params": {"temperature": None}})
    assert r.status == 200, r
    expect(items(page)).to_have_text(["model Gamma", "Edit mode", "its instructions (9 characters)", "1 tool off"])
    expect(chat_model(page)).to_have_text("Gamma")
    # Still open across the redraw, with the new text.
    expect(summary(page).locator(".project-prompt")).to_have_text("Be brief.")
    expect(summary(page).locator(".project-prompt-toggle")).to_have_attribute("aria-expanded", "true")

    # Nothing set beyond the name: said, with the way to set something.
    r = api.patch(f"/api/folders/{folder['id']}", {"model_id": None, "mode": None, "system_prompt": "", "tools_off": None})
    assert r.status == 200, r
    expect(summary(page)).to_have_text("No project settings yet. Edit folder…")
    expect(items(page)).to_have_count(0)
    expect(chat_model(page)).to_have_text("Fake")  # the default, as a new chat outside any folder
    summary(page).get_by_role("button", name="Edit folder…").click()
    sheet = page.get_by_role("dialog", name="Folder “Library”")
    expect(sheet).to_be_visible()
    expect(sheet.get_by_label("Name", exact=True)).to_have_value("Library")
    page.keyboard.press("Escape")
    expect(sheet).to_have_count(0)


def test_a_folder_with_only_a_name_says_so_and_a_draft_outside_folders_says_nothing(page, setup):
    assert setup.api.post("/api/folders", {"name": "Bare"}).status == 201
    sign_in(page, setup.server)
    expect(page.locator(".draft-bar")).to_be_visible()
    expect(summary(page)).to_have_count(0)
    new_chat_in(page, "Bare")
    expect(page.get_by_role("note")).to_have_text("No project settings yet. Edit folder…")
    # Leaving the folder takes the summary away with the chip.
    page.get_by_role("button", name="Start this chat outside the folder Bare").click()
    expect(page.locator(".folder-chip")).to_have_count(0)
    expect(summary(page)).to_have_count(0)
