"""Live chat-list markers in a real Chromium: a reply running in a chat that is not open.

The page learns of it only through its app-wide socket (/ws/_app): no list
read happens between the running marker and the unread one. Waits are on DOM
states, on the fake provider's `hang`, and on the test's own app socket —
never sleeps.
"""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, shot, wait_chat_ready
from tests.fakeprovider import script as S
from tests.numi_client import AppSocket

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def row(page, chat_id: str):
    return page.locator(f'.chat-list .chat-item[data-id="{chat_id}"]')


def test_a_reply_in_another_chat_shows_running_then_unread_until_opened(page, setup):
    chat_b = setup.chat(title="Background B")
    chat_a = setup.chat(title="Open A")  # newer: first in the list until B gets a message
    list_reads: list[str] = []
    page.on("request", lambda r: list_reads.append(r.url) if "/api/chats?" in r.url else None)
    open_chat(page, setup.server, chat_a, "Open A")
    rows = page.locator(".chat-list .chat-item")
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_attribute("data-id", chat_a)
    expect(row(page, chat_b).locator(".mark")).to_have_count(0)
    app = AppSocket(setup.server)  # the test's own view of the same events

    # A reply starts in B through another client's socket.
    setup.fake.enqueue([S.text("Working in the background. "), S.hang(), S.text("Done.")])
    other = setup.socket(chat_b)
    other.send(type="send", request_id="bg-1", content="Do something")
    setup.fake.wait_hanging()
    running = row(page, chat_b).locator(".mark.running")
    expect(running).to_be_visible()
    expect(running).to_have_attribute("aria-label", "running")
    expect(rows.first).to_have_attribute("data-id", chat_b)  # newest activity first
    reads_when_running = len(list_reads)

    # It ends with no window watching B: B becomes unread, A (open) never does.
    other.close()
    setup.fake.release()
    unread = row(page, chat_b).locator(".mark.unread")
    expect(unread).to_be_visible()
    expect(unread).to_have_attribute("aria-label", "unread")
    expect(running).to_have_count(0)
    expect(row(page, chat_b)).to_have_class(re.compile(r"\bis-unread\b"))
    expect(row(page, chat_a).locator(".mark")).to_have_count(0)
    expect(row(page, chat_a)).not_to_have_class(re.compile(r"\bis-unread\b"))
    assert len(list_reads) == reads_when_running, "the markers came from the app socket, not a list read"
    app.chat(chat_b, running=False, unread=True)
    shot(page, "sidebar-live-unread", dark=False)

    # Opening B marks it read: in this window at once, on the server once its socket opens.
    row(page, chat_b).locator(".chat-link").click()
    wait_chat_ready(page, "Background B")
    expect(row(page, chat_b).locator(".mark")).to_have_count(0)
    expect(row(page, chat_b)).not_to_have_class(re.compile(r"\bis-unread\b"))
    app.chat(chat_b, unread=False)
    assert setup.api.get(f"/api/chats/{chat_b}").body["unread"] is False
    expect(page.locator("article.msg.assistant").last.locator(".msg-body")).to_have_text(
        "Working in the background. Done.")


def test_rename_and_delete_in_another_window_show_up_live(page, setup):
    chat_a = setup.chat(title="Stays open")
    chat_b = setup.chat(title="Before")
    open_chat(page, setup.server, chat_a, "Stays open")
    expect(row(page, chat_b).locator(".chat-name")).to_have_text("Before")
    assert setup.api.patch(f"/api/chats/{chat_b}", {"title": "After"}).status == 200
    expect(row(page, chat_b).locator(".chat-name")).to_have_text("After")
    assert setup.api.delete(f"/api/chats/{chat_b}").status == 204
    expect(row(page, chat_b)).to_have_count(0)
    assert setup.api.post(f"/api/chats/{chat_b}/restore").status == 200
    expect(row(page, chat_b).locator(".chat-name")).to_have_text("After")
