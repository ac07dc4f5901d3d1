"""Your data in a real Chromium: a chat exported as Markdown (a real download), and a Numi
export imported through the Settings file input, the chat then listed in the sidebar.

Waits are on DOM states and browser events (Playwright's auto-waiting), never sleeps.
"""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, import_in_settings, open_chat, shot

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def test_export_a_chat_as_markdown(page, setup, tmp_path):
    chat = setup.chat(title="Trip notes", system_prompt="Be brief.")
    open_chat(page, setup.server, chat, "Trip notes")
    page.get_by_role("button", name="Chat settings: system prompt, temperature, reasoning").click()
    sheet = page.locator("dialog.sheet")
    expect(sheet).to_be_visible()
    with page.expect_download() as info:
        sheet.get_by_role("button", name="Markdown").click()
    download = info.value
    assert download.suggested_filename == f"Trip-notes-{chat}.md"
    path = tmp_path / "chat.md"
    download.save_as(path)
    text = path.read_text()
    assert text.startswith("# Trip notes\n") and "Be brief." in text


def test_import_a_numi_export_from_settings(page, setup, tmp_path):
    doc = {"format": "numi-export", "version": 1, "chats": [{
        "id": "c_0123456789abcdef", "title": "Imported from elsewhere", "created_at": "2026-01-02T03:04:05.000Z",
        "updated_at": "2026-01-02T03:05:00.000Z", "messages": [
            {"role": "user", "content": "Hello from the past", "created_at": "2026-01-02T03:04:05.000Z"},
            {"role": "assistant", "content": "Hi!", "status": "complete", "created_at": "2026-01-02T03:04:06.000Z"}]}]}
    export = tmp_path / "numi-export.json"
    export.write_text(json.dumps(doc))
    import_in_settings(page, setup.server, export)
    expect(page.locator(".data-status")).to_have_text("Imported 1 chat from numi-export.json.")
    expect(page.locator(".chat-list .chat-item", has_text="Imported from elsewhere")).to_be_visible()
    # The same file again adds nothing, and says so.
    page.locator("#import-file").set_input_files(str(export))
    expect(page.locator(".data-status")).to_have_text("1 chat from numi-export.json was already here.")
    expect(page.locator(".chat-list .chat-item")).to_have_count(1)
    # A file that is not an export: the sentence from the server, nothing added.
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    page.locator("#import-file").set_input_files(str(bad))
    expect(page.locator(".data-status")).to_contain_text("not an export Numi knows")
    expect(page.locator(".chat-list .chat-item")).to_have_count(1)
    shot(page, "settings-your-data", dark=False)
