"""More of the window in a real Chromium: long chats paged in on scroll, reasoning
timing, keyboard use of the chat list, and labels for assistive technology.

Waits are on DOM states (Playwright's auto-waiting `expect`), never sleeps.
"""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, DRAWN_SCRIPT, open_chat, sign_in, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def fill_chat(setup, chat_id: str, turns: int) -> None:
    """`turns` question/answer pairs through the chat's WebSocket (the fake answers each)."""
    sock = setup.socket(chat_id)
    try:
        sock.send(type="resume", after_event_id=0)
        for i in range(turns):
            setup.fake.enqueue(S.reply(f"a{i:02d}"))
            sock.send(type="send", request_id=f"fill-{i}", content=f"q{i:02d}")
            assert sock.until("turn_end", timeout=30)["status"] == "completed"
    finally:
        sock.close()


def messages(page):
    return page.locator(".messages article.msg")


# --- 1. long chats load older pages on scroll ---------------------------------------

def test_long_chat_loads_older_pages_when_scrolled_to_the_top(page, setup):
    chat = setup.chat(title="Long chat")
    fill_chat(setup, chat, 30)  # 60 messages
    sign_in(page, setup.server)
    page.goto(f"http://127.0.0.1:{setup.server.port}/?pagesize=20#/c/{chat}")
    wait_chat_ready(page, "Long chat")
    # Only the newest page, and the view sits at its bottom.
    expect(messages(page)).to_have_count(20)
    expect(messages(page).last.locator(".msg-body")).to_have_text("a29")
    expect(page.locator(".older")).to_be_visible()
    scroller = page.locator(".scroller")
    page.wait_for_function("""() => {
        const el = document.querySelector(".scroller");
        return el.scrollTop > 0 && el.scrollHeight - el.scrollTop - el.clientHeight < 2;
    }""")

    for count in (40, 60):
        first_id = messages(page).first.get_attribute("data-id")
        # Scroll to the top and note where the first message sits, in one task (the
        # observer reports asynchronously, so nothing has loaded yet).
        before = scroller.evaluate("""(el, id) => {
            el.scrollTop = 0;
            const m = el.querySelector(`article.msg[data-id="${id}"]`);
            return m.getBoundingClientRect().top;
        }""", first_id)
        expect(messages(page)).to_have_count(count)
        after = scroller.evaluate("""(el, id) =>
            el.querySelector(`article.msg[data-id="${id}"]`).getBoundingClientRect().top""", first_id)
        # The message that was first has not moved on screen: no jump.
        assert abs(after - before) <= 2, (before, after)
        assert scroller.evaluate("el => el.scrollTop") > 0

    # Everything is there, oldest first, and nothing more is offered.
    expect(page.locator(".older")).to_be_hidden()
    expect(messages(page).first.locator(".msg-body")).to_have_text("q00")
    # textContent: messages scrolled out of view skip rendering (content-visibility),
    # so their innerText is empty although they are in the page.
    texts = [t.strip() for t in page.locator(".messages article.msg .msg-body").all_text_contents()]
    assert texts == [x for i in range(30) for x in (f"q{i:02d}", f"a{i:02d}")]


def test_a_long_chat_paints_its_newest_messages_first(page, setup):
    chat = setup.chat(title="Drawn newest first")
    fill_chat(setup, chat, 25)  # 50 messages; the page is 40
    page.add_init_script(DRAWN_SCRIPT)
    # Tall enough that the first bubbles drawn do not fill it.
    page.set_viewport_size({"width": 1100, "height": 4200})
    sign_in(page, setup.server)
    page.goto(f"http://127.0.0.1:{setup.server.port}/?pagesize=40#/c/{chat}")
    wait_chat_ready(page, "Drawn newest first")
    expect(messages(page)).to_have_count(40)
    texts = [t.strip() for t in page.locator(".messages article.msg .msg-body").all_text_contents()]
    assert texts == [x for i in range(5, 25) for x in (f"q{i:02d}", f"a{i:02d}")]
    # Two frames later (any older-page request the sentinel set off would be made by then).
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    drawn = page.evaluate("window.__drawn")
    # The first paint had part of the page, its newest end; the rest went in above it
    # over the next frames.
    assert 0 < drawn["counts"][0] < 40 and drawn["counts"][-1] == 40, drawn
    # Never fewer than before: the newest reply, re-sent on connecting, stays in place.
    assert drawn["counts"] == sorted(drawn["counts"]), drawn
    # While the page was being drawn the sentinel stayed hidden: no older page was asked
    # for on its own (the first bubbles do not fill the view). The newest page is read
    # again once the last turn, re-sent on connecting, has ended.
    assert drawn["pages"] and not [p for p in drawn["pages"] if "before=" in p], drawn
    expect(page.locator(".older")).to_be_visible()


# --- 2. how long the model thought --------------------------------------------------

def test_reasoning_says_how_long_the_model_thought(page, setup):
    chat = setup.chat(title="Thinking chat")
    setup.fake.enqueue([S.reasoning("Let me think this through. "), S.hang(), S.text("The answer.")])
    open_chat(page, setup.server, chat, "Thinking chat")
    box = page.locator(".composer-input")
    box.fill("Think first")
    box.press("Enter")
    summary = page.locator("article.msg.assistant details.reasoning summary")
    expect(summary).to_have_text("Thinking…")
    setup.fake.wait_hanging()
    setup.fake.release()
    expect(page.locator("article.msg.assistant")).to_have_attribute("data-status", "complete")
    expect(summary).to_have_text(re.compile(r"^Thought for (less than a second|\d+ s)$"))
    # Saved history carries no timing: after a reload it is just "Reasoning".
    page.reload()
    wait_chat_ready(page, "Thinking chat")
    expect(summary).to_have_text("Reasoning")
    page.locator("article.msg.assistant details.reasoning summary").click()
    expect(page.locator("article.msg.assistant .reasoning-body")).to_have_text("Let me think this through.")


# --- 3. the chat list by keyboard ---------------------------------------------------

def focused(page, selector: str) -> bool:
    return page.evaluate("s => !!document.activeElement?.matches(s)", selector)


def test_chat_list_by_keyboard_only(page, setup):
    for title in ("Alpha chat", "Beta chat", "Gamma chat"):
        setup.chat(title=title)
    sign_in(page, setup.server)
    names = page.locator(".chat-list .chat-name")
    expect(names).to_have_count(3)
    order = names.all_inner_texts()
    first, second = order[0], order[1]
    page.locator(".chat-list .chat-link").first.click()
    wait_chat_ready(page, first)
    expect(page.locator(".chat-link[aria-current=page]")).to_have_text(first)

    # From the message box, Shift+Tab backwards until the chat list: only the open
    # chat's row is in the Tab order.
    expect(page.locator(".composer-input")).to_be_focused()
    for _ in range(20):
        if focused(page, ".chat-link"):
            break
        page.keyboard.press("Shift+Tab")
    expect(page.locator(".chat-link[aria-current=page]")).to_be_focused()
    assert page.locator('.chat-list .chat-link[tabindex="0"]').count() == 1

    # Down moves to the second chat, with a visible focus ring; Enter opens it.
    page.keyboard.press("ArrowDown")
    link2 = page.locator(".chat-list .chat-link", has_text=second)
    expect(link2).to_be_focused()
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Enter")
    wait_chat_ready(page, second)
    expect(link2).to_have_attribute("aria-current", "page")
    expect(page.locator(".chat-link[aria-current]")).to_have_count(1)

    # F2 renames the focused chat.
    link2.focus()
    page.keyboard.press("End")
    third = order[2]
    expect(page.locator(".chat-list .chat-link", has_text=third)).to_be_focused()
    page.keyboard.press("F2")
    rename = page.locator(".chat-list input.rename")
    expect(rename).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type("Renamed chat")
    page.keyboard.press("Enter")
    renamed = page.locator(".chat-list .chat-link", has_text="Renamed chat")
    expect(renamed).to_be_visible()
    expect(renamed).to_be_focused()
    # A new title is activity (the server moves updated_at), and the live list keeps
    # the server's order: the renamed chat is now first, still focused.
    expect(names.first).to_have_text("Renamed chat")

    # Delete asks nothing but offers Undo; focus moves to the neighbour.
    page.keyboard.press("Delete")
    toast = page.locator(".toast", has_text="Deleted “Renamed chat”.")
    expect(toast).to_be_visible()
    expect(names).to_have_count(2)
    expect(page.locator(".chat-list .chat-link", has_text=first)).to_be_focused()
    toast.get_by_role("button", name="Undo").click()
    expect(names).to_have_count(3)
    expect(page.locator(".chat-list .chat-name", has_text="Renamed chat")).to_be_visible()


# --- 4. names for assistive technology, focus in dialogs ------------------------------

UNLABELLED = """() => {
  const text = (el) => (el?.textContent || "").trim();
  const named = (el) => {
    if ((el.getAttribute("aria-label") || "").trim()) return true;
    const by = el.getAttribute("aria-labelledby");
    if (by && by.split(/\\s+/).some((id) => text(document.getElementById(id)))) return true;
    if (el.labels && [...el.labels].some((l) => text(l))) return true;
    if (/^(BUTTON|A|SUMMARY)$/.test(el.tagName) && text(el)) return true;
    if (el.tagName === "IMG") return el.hasAttribute("alt");
    return !!(el.getAttribute("title") || "").trim();
  };
  const root = document.querySelector("dialog[open]") || document;
  return [...root.querySelectorAll("button, input:not([type=hidden]), select, textarea, a[href], summary, img, [role=img]")]
    .filter((el) => el.getClientRects().length && !named(el))
    .map((el) => el.outerHTML.slice(0, 120));
}"""


def test_controls_are_labelled_and_dialogs_return_focus(page, setup):
    chat = setup.chat(title="Labels chat")
    setup.fake.enqueue([S.reasoning("Hmm. "), S.text("Some **bold** text.\n\n```py\nprint(1)\n```\n")])
    open_chat(page, setup.server, chat, "Labels chat")
    expect(page.locator(".composer-input")).to_have_accessible_name("Message")
    box = page.locator(".composer-input")
    box.fill("Hello")
    box.press("Enter")
    expect(page.locator("article.msg.assistant")).to_have_attribute("data-status", "complete")
    expect(page.locator("article.msg.assistant .code-copy")).to_be_visible()
    assert page.evaluate(UNLABELLED) == []

    # The shortcuts sheet: focus inside, Esc closes it, focus returns to the opener.
    opener = page.get_by_role("button", name="Keyboard shortcuts (?)")
    opener.focus()
    page.keyboard.press("Enter")
    sheet = page.locator("dialog.shortcuts")
    expect(sheet).to_be_visible()
    assert page.evaluate("document.querySelector('dialog[open]').contains(document.activeElement)")
    assert page.evaluate(UNLABELLED) == []
    page.keyboard.press("Escape")
    expect(sheet).to_have_count(0)
    expect(opener).to_be_focused()

    # Chat settings: Tab stays inside the dialog.
    settings_btn = page.get_by_role("button", name=re.compile("^Chat settings"))
    settings_btn.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog[open]")
    expect(dialog).to_be_visible()
    assert page.evaluate(UNLABELLED) == []
    for key in ["Tab"] * 12 + ["Shift+Tab"] * 12:
        page.keyboard.press(key)
        assert page.evaluate("!!document.querySelector('dialog[open]')?.contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(settings_btn).to_be_focused()
    # The running reply was not stopped by that Esc, and nothing else is open.
    expect(page.locator("article.msg.assistant")).to_have_attribute("data-status", "complete")

    # Settings page.
    page.keyboard.press("Control+,")
    expect(page.locator(".settings")).to_be_visible()
    expect(page.get_by_role("searchbox", name="Search settings")).to_be_visible()
    assert page.evaluate(UNLABELLED) == []


def test_a_screen_that_cannot_load_says_so_and_the_chat_stays(page, setup):
    """Settings is loaded on first use (web/app/lazy.js). When its module cannot be read,
    a toast says what to do, the window goes back to the chat, and the rest works."""
    chat = setup.chat(title="E2E lazy")
    # Its own module, or its chunk when the page is served from the bundle (web/.app-bundle).
    page.route(re.compile(r".*/app/(views/settings|settings-\w+)\.js$"), lambda route: route.abort())
    open_chat(page, setup.server, chat, "E2E lazy")
    page.get_by_role("button", name=re.compile("^Settings")).first.click()
    expect(page.locator(".toast", has_text="could not be loaded. Reload the window")).to_be_visible()
    # Back in the chat, live again: a reply streams into it.
    expect(page).to_have_url(re.compile(rf"#/c/{chat}$"))
    wait_chat_ready(page, "E2E lazy")
    setup.fake.enqueue(S.reply("Still here."))
    page.locator(".composer-input").fill("Are you there?")
    page.locator(".composer-input").press("Enter")
    expect(page.locator("article.msg.assistant[data-status=complete]")).to_contain_text("Still here.")
    # Nothing else broke: the shortcuts sheet (another lazily loaded module) opens.
    page.evaluate("document.activeElement.blur()")  # "?" in the message box is text
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()


def test_a_chat_address_that_names_no_chat_says_so(page, setup):
    """The chat in the address is read before the app has loaded (web/app/early.js); a
    chat that does not exist is reported in the view with the server's sentence, and the
    rest of the window works."""
    setup.chat(title="E2E other")
    sign_in(page, setup.server, "/c/c_0000000000000000")
    expect(page.get_by_role("heading", name="This chat could not be opened")).to_be_visible()
    expect(page.locator(".chat .empty")).to_contain_text("No chat with that id. It may have been deleted.")
    page.get_by_role("link", name="E2E other").click()
    wait_chat_ready(page, "E2E other")
