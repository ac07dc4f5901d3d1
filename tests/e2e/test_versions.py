"""Versions in the window (CONTRACT §5, docs/UI.md "Versions"), in a real Chromium against the
real server and the fake provider: edit and regenerate keep the old version, ‹ n/m › switches
between them, and a reply being written keeps streaming while another branch is looked at.

Every wait is on a DOM state, a response, or the fake provider's own events: no sleeps.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import (
    CHROMIUM,
    DRAWN_SCRIPT,
    open_chat,
    reload_counting_bubbles,
    replies,
    send,
    wait_chat_ready,
    wait_until,
)
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def users(page):
    return page.locator("article.msg.user")


def switcher(msg):
    return msg.locator(".versions")


def record_frames(page) -> list[dict]:
    """Every frame the page sends on its chat socket, parsed (attach before the chat opens)."""
    sent: list[dict] = []

    def on_socket(ws):
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)) if isinstance(payload, str) else None)

    page.on("websocket", on_socket)
    return sent


def long_text(name: str, n: int = 30) -> str:
    return "\n\n".join(f"{name} paragraph {i}." for i in range(n))


def top(locator) -> float:
    return locator.evaluate("el => el.getBoundingClientRect().top")


def mark(locator) -> None:
    """Tag a message's element: still tagged later means it was kept, not drawn again."""
    locator.evaluate("el => { el.dataset.kept = 'yes'; }")


def stored(setup, chat) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in setup.messages(chat)]


def test_edit_switch_back_and_forth_continue_on_the_old_branch_and_reload(page, setup):
    chat = setup.chat(title="Versions")
    setup.fake.enqueue(S.reply("First answer."), S.reply(long_text("Second answer")), S.reply("Edited answer."),
                       S.reply("More on the second."))
    frames = record_frames(page)
    open_chat(page, setup.server, chat, "Versions")
    send(page, "First question")
    expect(replies(page).last.locator(".msg-body")).to_have_text("First answer.")
    send(page, "Second question")
    expect(replies(page).last).to_have_attribute("data-status", "complete")

    second = users(page).last
    second.get_by_role("button", name="Edit this message").click()
    editor = second.locator(".editor")
    # It says what happens: a new version, the old one kept (nothing "discarded").
    expect(editor).to_contain_text("new version")
    expect(editor).not_to_contain_text("discarded")
    second.get_by_label("Edit message").fill("Second question, edited")
    second.get_by_role("button", name="Save & send").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Edited answer.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    edited = users(page).last
    expect(edited.locator(".msg-body")).to_have_text("Second question, edited")
    expect(switcher(edited).locator(".version-count")).to_have_text("2/2")
    expect(edited.get_by_role("group", name="Version 2 of 2")).to_be_visible()
    expect(switcher(replies(page).last)).to_have_count(0)  # the reply has no other version
    edit = [f for f in frames if f["type"] == "edit"]
    assert len(edit) == 1 and 1 <= len(edit[0]["request_id"]) <= 64, edit
    # Named for a screen reader and readable in both themes.
    from tests.e2e.test_a11y import A11y, low_contrast, unnamed_controls
    assert unnamed_controls(A11y(page))[0] == []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, [".version-count", ".versions button[aria-disabled=false]"]) == []
    page.emulate_media(color_scheme="light")

    # Back to the first version, by keyboard: the messages above stay as they are drawn, the
    # switched message keeps its place on screen, and the focus stays on the button.
    for msg in (users(page).first, replies(page).first):
        mark(msg)
    where = top(edited)
    edited.get_by_role("button", name="Previous version").focus()
    with page.expect_response(lambda r: r.url.endswith("/active") and r.request.method == "POST") as switched:
        page.keyboard.press("Enter")
    assert switched.value.status == 200
    old = users(page).last
    expect(old.locator(".msg-body")).to_have_text("Second question")
    expect(replies(page).last.locator(".msg-body")).to_contain_text("Second answer paragraph 29.")
    expect(old.get_by_role("group", name="Version 1 of 2")).to_be_visible()
    expect(old.get_by_role("button", name="Previous version")).to_be_focused()
    expect(old.get_by_role("button", name="Previous version")).to_have_attribute("aria-disabled", "true")
    assert abs(top(old) - where) <= 2, (top(old), where)
    expect(page.locator("article.msg[data-kept=yes]")).to_have_count(2)
    assert stored(setup, chat)[2:] == [("user", "Second question"), ("assistant", long_text("Second answer"))]

    # And forth, and back again.
    old.get_by_role("button", name="Next version").click()
    expect(users(page).last.locator(".msg-body")).to_have_text("Second question, edited")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Edited answer.")
    expect(users(page).last.get_by_role("button", name="Next version")).to_be_focused()
    assert abs(top(users(page).last) - where) <= 2
    users(page).last.get_by_role("button", name="Previous version").click()
    expect(users(page).last.locator(".msg-body")).to_have_text("Second question")
    expect(page.locator("article.msg[data-kept=yes]")).to_have_count(2)

    # Carrying on there: the message goes to the old branch, which the model is sent.
    send(page, "Tell me more")
    expect(replies(page).last.locator(".msg-body")).to_have_text("More on the second.")
    sent = [m["content"] for m in setup.fake.requests[-1].body["messages"]]
    assert sent == ["First question", "First answer.", "Second question", long_text("Second answer"), "Tell me more"]
    expected = [("user", "First question"), ("assistant", "First answer."), ("user", "Second question"),
                ("assistant", long_text("Second answer")), ("user", "Tell me more"),
                ("assistant", "More on the second.")]
    # The page shows the streamed text before the turn's last commit: wait for what is saved.
    wait_until(lambda: stored(setup, chat) == expected, "the reply to be saved on the old branch")

    # A reload shows that branch, with its n/m.
    page.reload()
    wait_chat_ready(page, "Versions")
    expect(replies(page).last.locator(".msg-body")).to_have_text("More on the second.")
    expect(users(page).locator(".msg-body")).to_have_text(["First question", "Second question", "Tell me more"])
    expect(replies(page)).to_have_count(3)
    expect(switcher(users(page).nth(1)).locator(".version-count")).to_have_text("1/2")
    expect(page.locator(".versions")).to_have_count(1)


def test_regenerate_with_another_model_shows_2_of_2_with_its_name(page, setup):
    tooly = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-tooly",
                                           "label": "Tooly"}).body
    chat = setup.chat(title="Regenerate with")
    setup.fake.enqueue(S.reply("First take."), [S.text("Second "), S.hang(), S.text("take.")])
    frames = record_frames(page)
    open_chat(page, setup.server, chat, "Regenerate with")
    send(page, "Say it")
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_have_text("First take.")
    # Regenerate says whose answer it asks for: the chat's model.
    expect(reply.get_by_role("button", name="Regenerate this reply with Fake")).to_be_visible()

    reply.get_by_role("button", name="Regenerate with another model").click()
    search = reply.get_by_role("combobox", name="Search models")
    search.fill("tooly")
    search.press("Enter")
    setup.fake.wait_hanging()
    new = replies(page).last
    expect(new.locator(".msg-body")).to_have_text("Second")
    # Named while it streams, not only once the turn has ended.
    expect(new.locator(".msg-meta")).to_have_text(re.compile(r"^Tooly · writing…"))
    expect(switcher(new).locator(".version-count")).to_have_text("2/2")
    setup.fake.release()
    expect(new).to_have_attribute("data-status", "complete")
    expect(new.locator(".msg-body")).to_have_text("Second take.")
    expect(new.locator(".msg-meta")).to_have_text("Tooly")
    expect(new.get_by_role("group", name="Version 2 of 2")).to_be_visible()
    expect(replies(page)).to_have_count(1)
    regen = [f for f in frames if f["type"] == "regenerate"]
    assert len(regen) == 1 and regen[0]["model_id"] == tooly["id"] and regen[0]["request_id"], regen
    assert setup.api.get(f"/api/chats/{chat}").body["model_id"] == setup.model["id"]

    # Back to the first take, then a reload: the socket re-sends the last turn (the second
    # take's), which is not on this branch; it must not show up on it.
    new.get_by_role("button", name="Previous version").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("First take.")
    expect(replies(page).last.locator(".msg-meta")).to_have_text("Fake")
    counts = reload_counting_bubbles(page, "Regenerate with")
    assert counts == [2], counts  # the question and the first take; never the second take
    expect(replies(page).last.locator(".msg-body")).to_have_text("First take.")
    expect(switcher(replies(page).last).locator(".version-count")).to_have_text("1/2")


def test_a_reply_streams_on_its_branch_while_the_other_is_looked_at(page, setup):
    chat = setup.chat(title="Look away")
    setup.fake.enqueue(S.reply("Old reply."), [S.text("New "), S.hang(), S.text("reply "), S.hang(), S.text("text.")])
    open_chat(page, setup.server, chat, "Look away")
    send(page, "Question")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Old reply.")
    replies(page).last.get_by_role("button", name="Regenerate this reply with Fake").click()
    setup.fake.wait_hanging()
    live = replies(page).last
    expect(live.locator(".msg-body")).to_have_text("New")
    expect(switcher(live).locator(".version-count")).to_have_text("2/2")
    new_id = int(live.get_attribute("data-id"))

    # The server will not switch while the reply runs (409 busy; the window knows it runs
    # and does not ask): the old version is read without switching, and shown read-only.
    with page.expect_response(lambda r: "/messages?through=" in r.url) as read:
        live.get_by_role("button", name="Previous version").click()
    assert read.value.status == 200
    assert setup.api.post(f"/api/chats/{chat}/active", {"message_id": 2}).status == 409
    old = replies(page).last
    expect(old.locator(".msg-body")).to_have_text("Old reply.")
    expect(switcher(old).locator(".version-count")).to_have_text("1/2")
    expect(old.get_by_role("button", name=re.compile("^Regenerate"))).to_have_count(0)
    # Still the active branch: the new reply, being written.
    assert [(m["id"], m["status"]) for m in setup.messages(chat)][-1] == (new_id, "streaming")

    # The reply keeps streaming meanwhile; switching back shows all of it, once.
    setup.fake.release()
    setup.fake.wait_hanging()
    old.get_by_role("button", name="Next version").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("New reply")
    expect(replies(page).last).to_have_attribute("data-status", "streaming")

    # Away again, and the reply ends meanwhile: the version looked at becomes the branch.
    replies(page).last.get_by_role("button", name="Previous version").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Old reply.")
    with page.expect_response(lambda r: r.url.endswith("/active") and r.status == 200):
        setup.fake.release()
    assert stored(setup, chat) == [("user", "Question"), ("assistant", "Old reply.")]
    expect(replies(page)).to_have_count(1)
    expect(replies(page).last.get_by_role("button", name="Regenerate this reply with Fake")).to_be_visible()
    # The new reply is whole on its own branch, written once.
    replies(page).last.get_by_role("button", name="Next version").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("New reply text.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page)).to_have_count(1)


def test_reloaded_while_a_new_version_streams_it_shows_once(page, setup):
    chat = setup.chat(title="Reload regen")
    setup.fake.enqueue(S.reply("Old reply."), [S.text("New "), S.hang(), S.text("reply text.")])
    open_chat(page, setup.server, chat, "Reload regen")
    send(page, "Question")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Old reply.")
    replies(page).last.get_by_role("button", name="Regenerate this reply with Fake").click()
    setup.fake.wait_hanging()
    expect(replies(page).last.locator(".msg-body")).to_have_text("New")
    # The partial text is saved at least once a second: reload once it is, so history has it.
    wait_until(lambda: setup.messages(chat)[-1]["content"] == "New ", "the partial reply is saved")

    page.add_init_script(DRAWN_SCRIPT)
    page.reload()
    wait_chat_ready(page, "Reload regen")
    expect(replies(page).last.locator(".msg-body")).to_have_text("New")
    expect(switcher(replies(page).last).locator(".version-count")).to_have_text("2/2")
    setup.fake.release()
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page).last.locator(".msg-body")).to_have_text("New reply text.")
    expect(replies(page)).to_have_count(1)
    # Drawn once: the question and the reply, never the old reply or a second copy.
    assert page.evaluate("window.__drawn.counts") == [2]


def test_a_search_hit_in_another_version_opens_that_version(page, setup):
    chat = setup.chat(title="Found elsewhere")
    setup.fake.enqueue(S.reply("About lighthouses."), S.reply("About mountains."))
    open_chat(page, setup.server, chat, "Found elsewhere")
    send(page, "Tell me about the lighthouse keeper")
    expect(replies(page).last.locator(".msg-body")).to_have_text("About lighthouses.")
    users(page).last.get_by_role("button", name="Edit this message").click()
    users(page).last.get_by_label("Edit message").fill("Tell me about mountains")
    users(page).last.get_by_role("button", name="Save & send").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("About mountains.")
    old_id = setup.api.get(f"/api/chats/{chat}/tree").body["items"][0]["id"]

    page.keyboard.press("Control+k")
    dialog = page.get_by_role("dialog", name="Search")
    box = dialog.get_by_role("combobox", name="Search all chats")
    box.fill("lighthouse keeper")
    expect(dialog.get_by_role("option")).to_have_count(1)
    box.press("Enter")
    found = page.locator(f'article.msg[data-id="{old_id}"]')
    expect(found).to_have_class(re.compile(r"\bmsg-found\b"))
    expect(found).to_be_focused()
    expect(switcher(found).locator(".version-count")).to_have_text("1/2")
    expect(replies(page).last.locator(".msg-body")).to_have_text("About lighthouses.")
    assert stored(setup, chat)[0] == ("user", "Tell me about the lighthouse keeper")
