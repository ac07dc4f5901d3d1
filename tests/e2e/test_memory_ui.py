"""Memory in a real Chromium against the real server and the fake provider (CONTRACT §8): Settings →
Memory lists every memory with its date and source chat, searches, edits, deletes and forgets
everything (asked first); a chat's and a folder's "Use memory"; and under a reply whose turn called
`remember`, the "Memory saved · Undo" chip, the memory listed as a source of a later reply, and
Undo taking the memory out again (or putting an updated one back)."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in, wait_until
from tests.fakeprovider import script as S
from tests.test_protocol_modes import call, tooled, turn  # noqa: F401 (tooled: a fixture)

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def texts(api) -> list[str]:
    r = api.get("/api/memories")
    assert r.status == 200, r
    return [m["text"] for m in r.body["items"]]


def remembered_in(setup, chat: str, text: str) -> None:
    """A turn of `chat` whose model saves `text` with remember (allowed in that chat: no card)."""
    r = setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "remember", "policy": "allow"})
    assert r.status == 200, r
    setup.fake.enqueue([call(0, "remember", {"text": text})], [S.text("Noted.")])
    sock = setup.socket(chat)
    try:
        t = turn(sock, f"r-{chat}")
        assert sock.until("memory_saved", turn_id=t)["text"] == text
        assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    finally:
        sock.ws.close()


def test_the_memory_page_lists_searches_edits_deletes_and_forgets_and_chats_and_folders_choose(page, tooled):
    setup = tooled
    api = setup.api
    folder = api.post("/api/folders", {"name": "Holidays"}).body
    trip = setup.chat(title="Trip", folder_id=folder["id"])
    gone = setup.chat(title="Gone")
    remembered_in(setup, trip, "Travels to Kyoto in May.")
    remembered_in(setup, gone, "Has a cat named Miso.")
    assert api.delete(f"/api/chats/{gone}").status == 204  # in the trash: GET …/chats/{id} is 404
    for text in ("Likes <b>green</b> tea.", "Works in Lyon."):
        assert api.post("/api/memories", {"text": text}).status == 201

    sign_in(page, setup.server, "/settings/memory")
    section = page.get_by_role("region", name="Memory", exact=True)
    items = section.locator(".mem-item")
    # Every memory, newest first, its text as text (the markup is shown, never made).
    expect(items.locator(".mem-text")).to_have_text(
        ["Works in Lyon.", "Likes <b>green</b> tea.", "Has a cat named Miso.", "Travels to Kyoto in May."])
    expect(section.locator(".mem-text b")).to_have_count(0)
    expect(section.locator(".mem-count")).to_have_text("4 memories.")
    # Each says its date and where it came from: a link to its chat, "deleted", or no chat.
    kyoto = items.filter(has_text="Kyoto")
    expect(kyoto.get_by_role("link", name="Trip")).to_have_attribute("href", f"#/c/{trip}")
    expect(items.filter(has_text="Miso").locator(".mem-source")).to_have_text("from a chat deleted since")
    expect(items.filter(has_text="Lyon").locator(".mem-source")).to_have_text("no source chat")
    expect(kyoto.locator("time")).not_to_have_text("")
    shot(page, "memory-01-page")

    # Search: the server's full-text filter.
    search = section.get_by_role("searchbox", name="Search memories")
    search.fill("tea")
    expect(items.locator(".mem-text")).to_have_text(["Likes <b>green</b> tea."])
    expect(section.locator(".mem-count")).to_have_text("1 memory matches “tea”.")
    search.fill("zzqx")
    expect(items).to_have_count(0)
    expect(section.locator(".mem-empty")).to_have_text("No memory matches “zzqx”.")
    search.press("Escape")
    expect(items).to_have_count(4)

    # Edit in place: an empty text is refused before the round trip, then a new text is saved.
    lyon = items.filter(has_text="Lyon")
    lyon.get_by_role("button", name="Edit").click()
    editor = section.get_by_role("textbox", name="Memory")
    editor.fill("   ")
    section.get_by_role("button", name="Save", exact=True).click()
    expect(section.get_by_role("alert").filter(has_text="empty memory")).to_be_visible()
    assert "Works in Lyon." in texts(api)
    editor.fill("Works in Paris since 2024.")
    section.get_by_role("button", name="Save", exact=True).click()
    expect(items.locator(".mem-text").first).to_have_text("Works in Paris since 2024.")
    wait_until(lambda: "Works in Paris since 2024." in texts(api) and "Works in Lyon." not in texts(api), "the edit to be saved")
    expect(section.locator(".mem-said")).to_have_text("Memory saved.")

    # Delete one.
    items.filter(has_text="Miso").get_by_role("button", name="Delete").click()
    expect(items).to_have_count(3)
    expect(section.locator(".mem-said")).to_have_text("Memory deleted.")
    assert "Has a cat named Miso." not in texts(api)

    # The global switch.
    switch = section.get_by_role("checkbox", name="Use memory")
    expect(switch).to_be_checked()
    switch.uncheck()
    wait_until(lambda: api.get("/api/settings").body["memory"] == {"enabled": False}, "memory to be off")
    expect(section.get_by_text("Memory is off: no chat reads or saves memories.")).to_be_visible()
    switch.check()
    wait_until(lambda: api.get("/api/settings").body["memory"] == {"enabled": True}, "memory to be on")

    # Forget everything: asked first, saying it cannot be undone; Cancel keeps them.
    section.get_by_role("button", name="Forget everything").click()
    ask = page.get_by_role("dialog", name="Forget everything?")
    expect(ask).to_contain_text("This cannot be undone.")
    ask.get_by_role("button", name="Cancel").click()
    expect(ask).to_have_count(0)
    assert len(texts(api)) == 3
    section.get_by_role("button", name="Forget everything").click()
    page.get_by_role("dialog", name="Forget everything?").get_by_role("button", name="Forget everything").click()
    expect(section.locator(".mem-empty")).to_contain_text("No memories yet.")
    expect(section.locator(".mem-empty")).to_contain_text("remember tool")
    assert texts(api) == []
    expect(section.get_by_role("button", name="Forget everything")).to_be_disabled()

    # A folder turns memory off for its chats (the sheet's checkbox) …
    page.get_by_role("button", name="Options for folder Holidays").click()
    page.get_by_role("menuitem", name="Rename and defaults…").click()
    sheet = page.get_by_role("dialog", name="Folder “Holidays”")
    box = sheet.get_by_role("checkbox", name="Use memory")
    expect(box).to_be_checked()
    box.uncheck()
    sheet.get_by_role("button", name="Save").click()
    expect(sheet).to_have_count(0)
    wait_until(lambda: api.get(f"/api/folders/{folder['id']}").body.get("memory") is False, "the folder's memory to be off")

    # … and a chat follows its folder, or chooses on or off for itself.
    page.get_by_role("link", name="Trip").first.click()
    expect(page).to_have_title("Trip — Numi")

    def chat_settings():
        page.get_by_role("button", name=re.compile("^Chat settings")).click()
        dialog = page.get_by_role("dialog", name="Chat settings")
        return dialog, dialog.get_by_label("Use memory")

    dialog, use = chat_settings()
    expect(use).to_have_value("folder")
    expect(dialog.locator("#cs-memory-hint")).to_contain_text("Folder “Holidays” has memory off.")
    use.select_option("on")
    dialog.get_by_role("button", name="Save").click()
    wait_until(lambda: api.get(f"/api/chats/{trip}").body.get("memory") is True, "the chat's memory to be on")
    dialog, use = chat_settings()
    expect(use).to_have_value("on")
    use.select_option("folder")
    dialog.get_by_role("button", name="Save").click()
    wait_until(lambda: api.get(f"/api/chats/{trip}").body.get("memory", "unset") is None, "the chat to follow its folder")


def test_a_remember_turn_shows_the_chip_a_later_reply_lists_the_memory_and_undo_takes_it_back(page, tooled):
    setup = tooled
    api = setup.api
    chat = setup.chat(title="Chip")
    first, second = "Drinks green tea every morning.", "Drinks green tea every morning, without sugar."
    setup.fake.enqueue([call(0, "remember", {"text": first})], [S.text("Noted.")])
    open_chat(page, setup.server, chat, "Chip")
    send(page, "Remember that I drink green tea every morning.")
    card = page.get_by_role("group", name="Approval needed for remember")
    card.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Noted.")
    chips = page.locator(".memory-chip")
    expect(chips).to_have_count(1)
    expect(chips.first.locator(".memory-chip-label")).to_have_text("Memory saved")
    expect(chips.first.locator(".memory-chip-text")).to_have_text(first)
    # Under the reply, right after its bubble.
    assert page.evaluate("[...document.querySelectorAll('article.msg.assistant')].at(-1)"
                         ".nextElementSibling.classList.contains('memory-chips')")
    (saved,) = api.get("/api/memories").body["items"]
    assert saved["text"] == first and saved["source_chat_id"] == chat

    # The next turn's request carries the memory: the reply lists it as a source, which leads to
    # Settings → Memory, not out of the app. Its remember says the fact again: an update.
    setup.fake.enqueue([call(0, "remember", {"text": second})], [S.text("Noted, no sugar [1].")])
    send(page, "And no sugar. Remember that too.")
    card = page.get_by_role("group", name="Approval needed for remember")
    card.get_by_role("button", name="Allow once").click()
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_have_text("Noted, no sugar 1.")
    source = reply.locator(".msg-sources .source-memory-link")
    expect(source).to_have_text(first)  # what the request carried, before the update
    expect(source).to_have_attribute("href", "#/settings/memory")
    assert source.get_attribute("target") is None
    expect(reply.locator(".msg-body .cite-memory")).to_have_attribute("href", "#/settings/memory")
    expect(chips).to_have_count(2)
    expect(chips.nth(1).locator(".memory-chip-label")).to_have_text("Memory updated")
    expect(chips.nth(1).locator(".memory-chip-text")).to_have_text(second)
    wait_until(lambda: texts(api) == [second], "the memory to be updated")
    shot(page, "memory-02-chips")

    # Undo of the update puts the old text back; Undo of the first save deletes the memory.
    chips.nth(1).get_by_role("button", name="Undo: put the memory back as it was").click()
    expect(chips.nth(1).locator(".memory-chip-said")).to_have_text("Memory put back as it was.")
    wait_until(lambda: texts(api) == [first], "the old text to be back")
    chips.nth(0).get_by_role("button", name="Undo: forget this memory").click()
    expect(chips.nth(0).locator(".memory-chip-said")).to_have_text("Memory removed.")
    expect(chips.get_by_role("button")).to_have_count(0)  # each Undo runs once
    wait_until(lambda: texts(api) == [], "the memory to be deleted")

    # The source opens Settings → Memory in the app's window.
    source.click()
    expect(page).to_have_url(re.compile(r"#/settings/memory$"))
    expect(page.get_by_role("region", name="Memory", exact=True).locator(".mem-empty")).to_contain_text("No memories yet.")
