"""Search in the window (Ctrl/⌘+K) against the real server, in a real Chromium.

Every wait is on a DOM state (Playwright's auto-waiting `expect`); no sleeps.
"""
from __future__ import annotations

import os
import re
import sqlite3
import time

import pytest
from playwright.sync_api import expect

from backend.store.history import link_in_order_sql
from tests.e2e.ui import CHROMIUM, shot, sign_in, wait_chat_ready

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

TARGET = "The secret ingredient is smoked paprika from Extremadura, added at the very end."


def fill_chat(server, chat_id: str, n: int, special: dict[int, str]) -> dict[int, int]:
    """n messages (user / assistant in turn), `special` texts at given positions; → position: id."""
    con = sqlite3.connect(server.data_dir / "numi.db", timeout=10)
    ids = {}
    t0 = time.time() - n
    with con:
        for i in range(n):
            text = special.get(i, f"Filler line {i} about the weather and nothing much.")
            cur = con.execute("INSERT INTO message (chat_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                              (chat_id, "user" if i % 2 == 0 else "assistant", text, t0 + i))
            ids[i] = cur.lastrowid
        for statement, args in link_in_order_sql(chat_id):  # one branch, in the order written
            con.execute(statement, args)
    con.close()
    return ids


def new_chat(api, title: str) -> str:
    r = api.post("/api/chats", {"title": title})
    assert r.status == 201, r
    return r.body["id"]


def open_search(page):
    page.keyboard.press("Control+k")
    dialog = page.get_by_role("dialog", name="Search")
    expect(dialog).to_be_visible()
    box = dialog.get_by_role("combobox", name="Search all chats")
    expect(box).to_be_focused()
    return dialog, box


def test_ctrl_k_finds_an_old_message_and_opens_the_chat_at_it(page, server):
    api = server.api()
    long_chat = new_chat(api, "Paella night")
    # 450 messages: the newest page holds 5 (?pagesize=5), so the hit is three big pages back.
    ids = fill_chat(server, long_chat, 450, {10: TARGET})
    other = new_chat(api, "Spice shelf")
    fill_chat(server, other, 2, {0: "paprika paprika, more paprika"})

    sign_in(page, server)
    base = f"http://127.0.0.1:{server.port}"
    page.goto(f"{base}/?pagesize=5#/c/{other}")
    wait_chat_ready(page, "Spice shelf")

    dialog, box = open_search(page)
    box.press_sequentially("paprika extrem")  # the last word is a prefix
    options = dialog.get_by_role("option")
    expect(options).to_have_count(1)
    box.fill("paprika")
    expect(options).to_have_count(2)
    # Best match first: the short message that is all paprika.
    expect(options.nth(0)).to_contain_text("Spice shelf")
    expect(options.nth(1)).to_contain_text("Paella night")
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    hit = options.nth(1).locator("mark")
    expect(hit).to_have_text(["paprika"])
    expect(options.nth(1).locator(".search-snippet")).to_contain_text("smoked paprika from Extremadura")
    expect(dialog.get_by_role("status")).to_contain_text("2 results")
    shot(page, "search-results")

    box.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", options.nth(1).get_attribute("id"))
    box.press("Enter")

    expect(dialog).to_be_hidden()
    expect(page).to_have_url(re.compile(rf"#/c/{long_chat}$"))
    found = page.locator(f'article.msg[data-id="{ids[10]}"]')
    expect(found).to_have_class(re.compile(r"\bmsg-found\b"))
    expect(found).to_be_in_viewport()
    expect(found).to_be_focused()
    expect(found).to_contain_text("smoked paprika")
    shot(page, "search-jump")
    # The history between the hit and the newest message is all there, in order.
    shown = page.locator("article.msg").evaluate_all("els => els.map(e => Number(e.dataset.id))")
    assert shown == sorted(shown) and shown[-1] == ids[449] and ids[10] in shown
    assert set(range(ids[10], ids[449] + 1)) <= set(shown)


def open_hit_in_chat(page, server, chat: str, title: str, query: str, message_id: int, pagesize: int = 5):
    """Open the chat (newest `pagesize` messages), search for `query` (one hit, `message_id`)
    and open it; returns the hit's bubble, marked as found."""
    sign_in(page, server)
    page.goto(f"http://127.0.0.1:{server.port}/?pagesize={pagesize}#/c/{chat}")
    wait_chat_ready(page, title)
    dialog, box = open_search(page)
    box.fill(query)
    expect(dialog.get_by_role("option")).to_have_count(1)
    box.press("Enter")
    found = page.locator(f'article.msg[data-id="{message_id}"]')
    expect(found).to_have_class(re.compile(r"\bmsg-found\b"))
    return found


def test_search_in_the_open_chat_scrolls_to_the_message(page, server):
    api = server.api()
    chat = new_chat(api, "Notes")
    ids = fill_chat(server, chat, 30, {3: "remember the lighthouse keeper"})
    found = open_hit_in_chat(page, server, chat, "Notes", "lighthouse", ids[3])
    expect(found).to_be_in_viewport()


def test_hostile_query_shows_no_results_and_markup_stays_text(page, setup):
    server, api = setup.server, setup.api
    chat = new_chat(api, "Markup")
    fill_chat(server, chat, 1, {0: '<img src=x onerror="window.pwned=1"> <b>zebra</b> crossing'})
    sign_in(page, server)
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    dialog, box = open_search(page)
    box.fill('"NEAR( content: -* OR AND ^ \'; DROP TABLE message; --')
    expect(dialog.get_by_role("status")).to_contain_text("No results for")
    expect(dialog.get_by_role("option")).to_have_count(0)

    box.fill("zebra")
    option = dialog.get_by_role("option")
    expect(option).to_have_count(1)
    expect(option.locator("mark")).to_have_text(["zebra"])
    expect(option.locator(".search-snippet")).to_contain_text('<img src=x onerror="window.pwned=1"> <b>zebra</b>')
    assert dialog.locator("img, b").count() == 0
    assert page.evaluate("window.pwned") is None

    # Esc closes the sheet; focus goes back to the message box.
    box.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()


def test_shortcuts_sheet_lists_search(page, setup):
    sign_in(page, setup.server)
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    page.evaluate("document.activeElement.blur()")  # "?" outside a text field opens the sheet
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_contain_text("Search all chats")


def test_a_result_deleted_since_it_was_found_says_so(page, server):
    api = server.api()
    chat = new_chat(api, "Edited")
    ids = fill_chat(server, chat, 30, {29: "the old wording about a windmill"})
    sign_in(page, server)
    dialog, box = open_search(page)
    box.fill("windmill")
    expect(dialog.get_by_role("option")).to_have_count(1)
    # Meanwhile it goes for good (as purging removes rows), and the branch ends above it.
    con = sqlite3.connect(server.data_dir / "numi.db", timeout=10)
    with con:
        con.execute("DELETE FROM message WHERE id = ?", (ids[29],))
        con.execute("UPDATE chat SET active_leaf_id = ? WHERE id = ?", (ids[28], chat))
    con.close()
    box.press("Enter")
    expect(page).to_have_url(re.compile(rf"#/c/{chat}$"))
    expect(page.get_by_role("status").filter(has_text="That message is no longer in this chat.")).to_be_visible()
