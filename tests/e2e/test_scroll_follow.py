"""The thread follows what the person just did, measured as the distance to the bottom.

A real Chromium against the real server and the fake provider; every wait is on a
DOM state or on the fake's own events (a response parked in a `hang` step).
"""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_search import fill_chat, open_hit_in_chat
from tests.e2e.ui import CHROMIUM, open_chat, replies, send
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

# A few pixels of rounding (fractional line heights) still count as the bottom.
AT_BOTTOM_PX = 4

# The distance after two more frames: the layout of the last change and the scroll
# that follows it (applied by a ResizeObserver after layout) are both done by then.
DISTANCE = """() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
  const s = document.querySelector('.chat .scroller');
  done(s.scrollHeight - s.scrollTop - s.clientHeight);
})))"""


def long_text(tag: str, lines: int = 40) -> str:
    """A reply several screens tall, so a view that stays put is far from its end."""
    return "\n\n".join(f"{tag} paragraph {i}: some words to make a line." for i in range(lines))


def distance(page) -> float:
    return page.evaluate(DISTANCE)


def test_sending_after_a_search_hit_follows_the_new_reply(page, setup):
    chat = setup.chat(title="Long history")
    ids = fill_chat(setup.server, chat, 40, {3: "remember the lighthouse keeper"})
    open_hit_in_chat(page, setup.server, chat, "Long history", "lighthouse", ids[3], pagesize=10)
    assert distance(page) > 500  # the hit is far up the thread

    setup.fake.enqueue([S.text(long_text("First")), S.hang(), S.text(long_text("Then"))])
    page.locator(".composer-input").click()
    send(page, "a new question")
    setup.fake.wait_hanging()
    follows_to_the_end(page, setup, "First", "Then")


def follows_to_the_end(page, setup, first: str, then: str) -> None:
    """With the reply parked after its `first` part: at the bottom now, and again once
    the fake is let go and the reply ends with its `then` part."""
    expect(replies(page).last).to_contain_text(f"{first} paragraph 39")
    assert distance(page) <= AT_BOTTOM_PX, "the reply being written is not followed"
    setup.fake.release()
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page).last).to_contain_text(f"{then} paragraph 39")
    assert distance(page) <= AT_BOTTOM_PX, "the reply was not followed to its end"


@pytest.mark.parametrize("steer", [False, True], ids=["queued", "steered"])
def test_a_queued_message_that_starts_its_own_reply_is_followed(page, setup, steer):
    chat = setup.chat(title="Queue follow")
    setup.fake.enqueue([S.text("Working on it. "), S.hang(), S.text(long_text("Done"))],
                       [S.text(long_text("Second")), S.hang(), S.text(long_text("End"))])
    open_chat(page, setup.server, chat, "Queue follow")
    send(page, "one")
    setup.fake.wait_hanging()
    expect(replies(page).last).to_contain_text("Working on it.")
    box = page.locator(".composer-input")
    box.fill("two")
    box.press("Control+Enter" if steer else "Enter")
    expect(page.locator(".queue .queue-chip")).to_have_count(1)
    setup.fake.release()
    # The first reply ends with no tool step, so "two" starts a reply of its own.
    setup.fake.wait_hanging()
    expect(replies(page)).to_have_count(2)
    follows_to_the_end(page, setup, "Second", "End")


def set_hidden(page, hidden: bool) -> None:
    """What a window hidden to the tray (or shown again) tells the page: document.hidden and
    visibilityState change, then `visibilitychange` fires on the document."""
    page.evaluate("""(hidden) => {
      Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
      Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
      document.dispatchEvent(new Event('visibilitychange'));
    }""", hidden)


def test_a_window_shown_again_is_at_the_end_of_the_reply_that_finished_while_hidden(page, setup):
    chat = setup.chat(title="Tray")
    setup.fake.enqueue([S.text(long_text("Start", 10)), S.hang(), S.text(long_text("Rest"))])
    open_chat(page, setup.server, chat, "Tray")
    send(page, "a long question")
    setup.fake.wait_hanging()
    expect(replies(page).last).to_contain_text("Start paragraph 9")
    assert distance(page) <= AT_BOTTOM_PX
    set_hidden(page, True)
    # While hidden the native window may lay the page out at another size (an unmapped
    # view): the scroller ends somewhere else than the bottom of the final reply.
    page.set_viewport_size({"width": 1100, "height": 200})
    setup.fake.release()
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    page.evaluate("() => { document.querySelector('.chat .scroller').scrollTop = 0; }")
    page.set_viewport_size({"width": 1100, "height": 760})
    set_hidden(page, False)
    expect(replies(page).last).to_contain_text("Rest paragraph 39")
    assert distance(page) <= AT_BOTTOM_PX, "the window shown again is not at the end of the reply"


def test_a_person_who_scrolls_up_is_left_where_they_are(page, setup):
    chat = setup.chat(title="Reading back")
    setup.fake.enqueue([S.text(long_text("Start")), S.hang(), S.text(long_text("Rest"))])
    open_chat(page, setup.server, chat, "Reading back")
    send(page, "a long question")
    setup.fake.wait_hanging()
    expect(replies(page).last).to_contain_text("Start paragraph 39")
    page.locator(".chat .scroller").hover()
    page.mouse.wheel(0, -800)
    page.wait_for_function("() => { const s = document.querySelector('.chat .scroller');"
                           " return s.scrollHeight - s.scrollTop - s.clientHeight > 700; }")
    top = page.evaluate("() => document.querySelector('.chat .scroller').scrollTop")
    setup.fake.release()
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page).last).to_contain_text("Rest paragraph 39")
    assert distance(page) > 2000
    assert page.evaluate("() => document.querySelector('.chat .scroller').scrollTop") == top
