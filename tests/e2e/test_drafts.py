"""Drafts in a real Chromium: what is typed and attached in a chat's message box is kept per
chat — across switching chats, reloading and a server restart — until it is sent or cleared.

Waits are on DOM states (Playwright's `expect`), on the page's own requests and on the
server's saved draft; no sleeps.
"""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_attachments import chips, choose_files
from tests.e2e.ui import CHROMIUM, open_chat, replies, wait_chat_ready, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

NOTES = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"Points to raise on Monday.\n"}


def box(page):
    return page.locator(".composer-input")


def switch_to(page, chat_id: str, title: str) -> None:
    """Open another chat from the sidebar, as the person would."""
    page.locator(f'.chat-list .chat-item[data-id="{chat_id}"] .chat-link').click()
    wait_chat_ready(page, title)


def saved(setup, chat_id: str) -> tuple[str, list[str]]:
    body = setup.server.api().get(f"/api/chats/{chat_id}/draft").body
    return body["text"], [f["name"] for f in body["files"]]


def expect_draft(page, text: str, names: list[str]) -> None:
    expect(box(page)).to_have_value(text)
    expect(chips(page).locator(".attach-name")).to_have_text(names)
    for chip in chips(page).all():
        expect(chip).to_have_attribute("data-state", "ready")


def test_a_draft_survives_switching_chats_reloading_and_a_restart(page, setup):
    a, b = setup.chat(title="Draft A"), setup.chat(title="Draft B")
    open_chat(page, setup.server, a, "Draft A")
    choose_files(page, NOTES)
    expect(chips(page)).to_have_attribute("data-state", "ready")
    box(page).fill("Half a thought about")

    # Straight to B (the typing's pause not over): B's box is its own, empty.
    switch_to(page, b, "Draft B")
    expect_draft(page, "", [])
    box(page).fill("Something for B")
    switch_to(page, a, "Draft A")
    expect_draft(page, "Half a thought about", ["notes.txt"])
    switch_to(page, b, "Draft B")
    expect_draft(page, "Something for B", [])
    switch_to(page, a, "Draft A")

    page.reload()
    wait_chat_ready(page, "Draft A")
    expect_draft(page, "Half a thought about", ["notes.txt"])
    assert saved(setup, a) == ("Half a thought about", ["notes.txt"])
    assert saved(setup, b) == ("Something for B", [])

    # A new server process on the same data folder (a new port, a new sign-in).
    setup.server.terminate()
    setup.server.start()
    open_chat(page, setup.server, a, "Draft A")
    expect_draft(page, "Half a thought about", ["notes.txt"])
    # The restored draft is the box's: more typing is saved on top of it.
    box(page).press("End")
    box(page).press_sequentially(" the plan")
    wait_until(lambda: saved(setup, a) == ("Half a thought about the plan", ["notes.txt"]), "the longer draft is saved")


def test_leaving_the_page_right_after_typing_keeps_the_draft(page, setup):
    a = setup.chat(title="Draft quick")
    open_chat(page, setup.server, a, "Draft quick")
    box(page).fill("Typed just before closing")
    page.goto("about:blank")  # the page goes away before the typing's pause is over
    wait_until(lambda: saved(setup, a) == ("Typed just before closing", []), "the draft is saved on leaving")
    open_chat(page, setup.server, a, "Draft quick")
    expect_draft(page, "Typed just before closing", [])


def test_a_sent_draft_is_gone_even_when_its_save_lands_after_the_send(page, setup):
    a, b = setup.chat(title="Draft sent"), setup.chat(title="Draft other")
    open_chat(page, setup.server, a, "Draft sent")
    # The draft's save is held on its way until the message is sent: it lands after the send.
    held = []
    page.route("**/api/chats/*/draft", lambda route: held.append(route) if route.request.method == "PUT"
               else route.continue_())
    box(page).fill("Send me")
    deadline_pumps = 2000
    while not held:  # each evaluate lets Playwright deliver the held request to the handler
        deadline_pumps -= 1
        assert deadline_pumps, "the draft's save never started"
        page.evaluate("() => new Promise((r) => setTimeout(r, 10))")
    setup.fake.enqueue([S.text("Got it.")])
    box(page).press("Enter")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    held[0].continue_()
    page.unroute("**/api/chats/*/draft")
    # The late save made a draft again; the page follows it with a DELETE.
    wait_until(lambda: saved(setup, a) == ("", []), "the sent draft is dropped")
    expect_draft(page, "", [])

    switch_to(page, b, "Draft other")
    switch_to(page, a, "Draft sent")
    expect_draft(page, "", [])
    page.reload()
    wait_chat_ready(page, "Draft sent")
    expect(page.locator("article.msg.user")).to_have_count(1)
    expect_draft(page, "", [])
    assert saved(setup, a) == ("", [])


def test_a_cleared_draft_is_gone(page, setup):
    a = setup.chat(title="Draft cleared")
    open_chat(page, setup.server, a, "Draft cleared")
    choose_files(page, NOTES)
    expect(chips(page)).to_have_attribute("data-state", "ready")
    box(page).fill("Never mind")
    wait_until(lambda: saved(setup, a) == ("Never mind", ["notes.txt"]), "the draft is saved")

    box(page).fill("")
    page.get_by_role("button", name="Remove notes.txt").click()
    wait_until(lambda: saved(setup, a) == ("", []), "the cleared draft is dropped")
    # Nothing comes back: the box stays empty once the page has asked for the draft.
    with page.expect_response(lambda r: r.url.endswith(f"/api/chats/{a}/draft")):
        page.reload()
    wait_chat_ready(page, "Draft cleared")
    expect_draft(page, "", [])


def test_the_new_chat_keeps_its_draft_while_the_page_lives(page, setup):
    a = setup.chat(title="Draft elsewhere")
    open_chat(page, setup.server, a, "Draft elsewhere")
    page.get_by_role("button", name="New chat (Ctrl+N)").click()
    expect(page.locator(".chat-header .chat-title")).to_have_text("New chat")
    box(page).fill("An idea for later")
    switch_to(page, a, "Draft elsewhere")
    expect_draft(page, "", [])
    page.get_by_role("button", name="New chat (Ctrl+N)").click()
    expect_draft(page, "An idea for later", [])
