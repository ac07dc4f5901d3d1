"""Organising chats in a real Chromium: folders with defaults that a new chat in them
inherits, moving a chat (from the keyboard), archiving, the trash (restore, delete
forever, empty) and temporary chats (banner, Keep this chat).

Waits are on DOM states (Playwright's auto-waiting `expect`), never sleeps.
"""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, send, shot, sign_in, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def row(page, chat_id: str):
    return page.locator(f'.chat-list .chat-item[data-id="{chat_id}"]')


def folder(page, folder_id: str):
    return page.locator(f'.chat-list .folder[data-folder-id="{folder_id}"]')


def chat_model(page):
    """The name on the composer's model picker: the model the chat (or the new chat) uses."""
    return page.locator(".composer .model-picker-btn .model-name")


def open_chat_id(page) -> str:
    page.wait_for_url(re.compile(r"#/c/c_[0-9a-f]+$"))
    return page.url.rsplit("/", 1)[1]


def chat_menu(page, chat_id: str):
    """Open a chat's ⋯ menu and return it."""
    row(page, chat_id).hover()
    row(page, chat_id).locator(".item-menu").click()
    menu = row(page, chat_id).get_by_role("menu")
    expect(menu).to_be_visible()
    return menu


def test_a_new_chat_in_a_folder_starts_with_its_model_and_system_prompt(page, setup):
    api = setup.api
    beta = api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-beta",
                                    "label": "Beta"}).body
    assert api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    sign_in(page, setup.server)
    expect(chat_model(page)).to_have_text("Fake")

    # Make the folder in its sheet: a name and the defaults.
    page.get_by_role("button", name="New folder").click()
    dialog = page.get_by_role("dialog", name="New folder")
    dialog.get_by_label("Name").fill("Research")
    dialog.get_by_label("Model").select_option(label="Beta")
    dialog.get_by_label("System prompt").fill("Answer like a librarian.")
    dialog.get_by_role("button", name="Create folder").click()
    expect(dialog).to_have_count(0)
    toggle = page.get_by_role("button", name="Research", exact=True)
    expect(toggle).to_have_attribute("aria-expanded", "true")
    made = api.get("/api/folders").body["items"][0]
    assert (made["name"], made["model_id"], made["system_prompt"]) == ("Research", beta["id"],
                                                                       "Answer like a librarian.")

    # A new chat in it shows the folder's model before anything is sent.
    page.get_by_role("button", name="Options for folder Research").click()
    page.get_by_role("menuitem", name="New chat in this folder").click()
    expect(page.locator(".folder-chip")).to_have_text("In folder “Research”")
    expect(chat_model(page)).to_have_text("Beta")
    expect(page.locator(".composer-input")).to_be_focused()
    shot(page, "organise-new-chat-in-folder", dark=False)

    setup.fake.enqueue(S.reply("Filed under R."))
    send(page, "Where are the atlases?")
    chat_id = open_chat_id(page)
    expect(page.locator("article.msg.assistant .msg-body")).to_have_text("Filed under R.")
    expect(chat_model(page)).to_have_text("Beta")
    expect(page.locator(".folder-chip")).to_have_count(0)
    # Filed in the folder's group of the list, with the model it copied; the folder's prompt is read
    # at each request, not copied.
    expect(folder(page, made["id"]).locator(f'.chat-item[data-id="{chat_id}"]')).to_be_visible()
    chat = api.get(f"/api/chats/{chat_id}").body
    assert (chat["folder_id"], chat["model_id"], chat["system_prompt"]) == (made["id"], beta["id"], "")
    # The answer's request (a title request may follow it) went to the folder's model, with its prompt.
    request = next(r.body for r in setup.fake.requests
                   if r.body and r.body.get("messages") and r.body["messages"][-1].get("content") == "Where are the atlases?")
    assert request["model"] == "fake-beta"
    assert {"role": "system", "content": "Answer like a librarian."} in request["messages"]

    # The next plain New chat is outside the folder again.
    page.get_by_role("button", name=re.compile("^New chat")).click()
    expect(page.locator(".folder-chip")).to_have_count(0)
    expect(chat_model(page)).to_have_text("Fake")


def test_move_a_chat_to_a_folder_fold_it_and_delete_the_folder(page, setup):
    api = setup.api
    work = api.post("/api/folders", {"name": "Work"}).body
    chat = setup.chat(title="Loose ends")
    sign_in(page, setup.server)
    expect(row(page, chat)).to_be_visible()
    expect(folder(page, work["id"]).get_by_text("No chats here yet.")).to_be_visible()

    # From the keyboard: the row's menu, Move to folder…, pick Work, Enter.
    row(page, chat).locator(".chat-link").focus()
    page.keyboard.press("Tab")
    expect(row(page, chat).locator(".item-menu")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("menuitem", name="Rename")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("menuitem", name="Move to folder…")).to_be_focused()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Move to folder")
    expect(dialog.get_by_role("radio", name="No folder")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(dialog.get_by_role("radio", name="Work")).to_be_checked()
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    expect(folder(page, work["id"]).locator(f'.chat-item[data-id="{chat}"]')).to_be_visible()
    assert api.get(f"/api/chats/{chat}").body["folder_id"] == work["id"]

    # Folding the group hides its chats, and the list remembers it.
    toggle = page.get_by_role("button", name="Work", exact=True)
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(row(page, chat)).to_have_count(0)
    page.reload()
    expect(page.get_by_role("button", name="Work", exact=True)).to_have_attribute("aria-expanded", "false")
    page.get_by_role("button", name="Work", exact=True).click()
    expect(row(page, chat)).to_be_visible()

    # Deleting the folder asks first, then keeps the chat, in no folder.
    page.get_by_role("button", name="Options for folder Work").click()
    page.get_by_role("menuitem", name="Delete folder…").click()
    confirm = page.get_by_role("dialog", name="Delete folder?")
    expect(confirm).to_contain_text("Its chat stays, outside any folder")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    confirm.get_by_role("button", name="Delete folder").click()
    expect(folder(page, work["id"])).to_have_count(0)
    expect(row(page, chat)).to_be_visible()
    assert api.get("/api/folders").body["items"] == []
    assert api.get(f"/api/chats/{chat}").body["folder_id"] is None


def test_archive_and_unarchive(page, setup):
    chat = setup.chat(title="Old project")
    setup.chat(title="Current")
    sign_in(page, setup.server)
    chat_menu(page, chat).get_by_role("menuitem", name="Archive").click()
    expect(row(page, chat)).to_have_count(0)
    assert setup.api.get(f"/api/chats/{chat}").body["archived"] is True

    page.get_by_role("link", name="Archived chats").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Archived chats")
    expect(page.get_by_role("link", name="Archived chats")).to_have_attribute("aria-current", "page")
    entry = page.locator(f'.place-row[data-id="{chat}"]')
    expect(entry).to_contain_text("Old project")
    # It opens as any chat does, and says it is archived.
    entry.get_by_role("link", name="Old project").click()
    wait_chat_ready(page, "Old project")
    expect(page.locator(".archived-banner")).to_be_visible()
    page.locator(".archived-banner").get_by_role("button", name="Unarchive").click()
    expect(page.locator(".archived-banner")).to_have_count(0)
    expect(row(page, chat)).to_be_visible()
    assert setup.api.get(f"/api/chats/{chat}").body["archived"] is False


def test_delete_then_restore_from_the_trash_delete_forever_and_empty_it(page, setup):
    api = setup.api
    keep = setup.chat(title="Keeper")
    back = setup.chat(title="Comes back")
    never = setup.chat(title="Never again")
    sign_in(page, setup.server)
    chat_menu(page, back).get_by_role("menuitem", name="Delete").click()
    expect(row(page, back)).to_have_count(0)
    assert api.delete(f"/api/chats/{never}").status == 204  # another window, say

    page.get_by_role("link", name="Trash").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Trash")
    rows = page.locator(".place-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Never again")  # newest deletion first
    expect(page.locator(".place-body > .hint")).to_have_text(re.compile("30 days"))
    shot(page, "organise-trash", dark=False)

    # Restore: back in the chat list, gone from the trash.
    page.get_by_role("button", name="Restore Comes back").click()
    expect(page.locator(f'.place-row[data-id="{back}"]')).to_have_count(0)
    expect(row(page, back)).to_be_visible()
    assert api.get(f"/api/chats/{back}").status == 200

    # Delete forever asks first; Cancel keeps it.
    page.get_by_role("button", name="Delete Never again forever").click()
    confirm = page.get_by_role("dialog", name="Delete forever?")
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)
    expect(rows).to_have_count(1)
    page.get_by_role("button", name="Delete Never again forever").click()
    page.get_by_role("dialog", name="Delete forever?").get_by_role("button", name="Delete forever").click()
    expect(page.get_by_text("The trash is empty.")).to_be_visible()
    assert api.post(f"/api/chats/{never}/restore").status == 404

    # A chat deleted elsewhere shows up here live; Empty trash asks, then removes everything.
    assert api.delete(f"/api/chats/{keep}").status == 204
    expect(rows).to_have_count(1)
    page.get_by_role("button", name="Empty trash").click()
    confirm = page.get_by_role("dialog", name="Empty the trash?")
    expect(confirm).to_contain_text("The chat in the trash will be deleted for good")
    confirm.get_by_role("button", name="Empty trash").click()
    expect(page.get_by_text("The trash is empty.")).to_be_visible()
    expect(page.get_by_role("button", name="Empty trash")).to_be_disabled()
    assert api.get("/api/trash").body["items"] == []
    assert api.post(f"/api/chats/{keep}/restore").status == 404


def test_a_temporary_chat_shows_a_banner_until_kept(page, setup):
    saved = setup.chat(title="Saved chat")
    assert setup.api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    sign_in(page, setup.server)
    expect(row(page, saved)).to_be_visible()
    toggle = page.get_by_role("button", name="Temporary chat")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")

    setup.fake.enqueue(S.reply("Gone when you close me."))
    send(page, "Just a quick question")
    chat_id = open_chat_id(page)
    expect(page.locator("article.msg.assistant .msg-body")).to_have_text("Gone when you close me.")
    banner = page.locator(".temp-banner")
    expect(banner).to_contain_text("deleted when Numi closes")
    # In no list: the sidebar shows only the saved chat, the server lists only it too.
    expect(page.locator(".chat-list .chat-item")).to_have_count(1)
    assert setup.api.get(f"/api/chats/{chat_id}").body["temporary"] is True
    assert [c["id"] for c in setup.api.get("/api/chats").body["items"]] == [saved]
    shot(page, "organise-temporary", dark=False)

    banner.get_by_role("button", name="Keep this chat").click()
    expect(page.locator(".temp-banner")).to_have_count(0)
    expect(row(page, chat_id)).to_be_visible()
    expect(page.locator(".composer-input")).to_be_focused()
    assert setup.api.get(f"/api/chats/{chat_id}").body["temporary"] is False
    # The toggle was for that one chat: the next new chat is a normal one.
    page.get_by_role("button", name=re.compile("^New chat")).click()
    expect(page.get_by_role("button", name="Temporary chat")).to_have_attribute("aria-pressed", "false")
