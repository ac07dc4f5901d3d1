"""Small things that read as unfinished, in a real Chromium against the real server:
a queued message shown once, toasts clear of the composer, a denied call's label.

Every wait is on a DOM state or on the fake provider's own events; no sleeps.
"""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def test_a_queued_message_shows_once_as_its_chip(page, setup):
    chat = setup.chat(title="Queued once")
    setup.fake.enqueue([S.text("Working on it. "), S.hang(), S.text("Done.")], S.reply("Answer to two."))
    open_chat(page, setup.server, chat, "Queued once")
    send(page, "one")
    setup.fake.wait_hanging()
    send(page, "two")
    chip = page.locator(".queue .queue-chip")
    expect(chip).to_have_count(1)
    expect(chip).to_contain_text("Queued: two")
    # The chip is where it shows (with its Remove button); no bubble for it too.
    expect(page.locator("article.msg.user", has_text="two")).to_have_count(0)
    setup.fake.release()
    expect(page.locator(".queue")).to_be_hidden()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answer to two.")
    expect(page.locator("article.msg.user", has_text="two")).to_have_count(1)


def test_a_call_the_person_denied_reads_denied_not_failed(page, setup):
    chat = setup.chat(title="Denied call")
    setup.fake.enqueue([S.tool_call(0, "call_1", "guarded", '{"text": "no"}')], S.reply("Understood."))
    open_chat(page, setup.server, chat, "Denied call")
    send(page, "Use the guarded tool")
    card = page.get_by_role("group", name="Approval needed for guarded")
    card.get_by_role("button", name="Deny…").click()
    card.get_by_role("textbox", name="Reason for denying").fill("not now")
    card.get_by_role("button", name="Deny", exact=True).click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Understood.")
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "denied")
    expect(row.locator(".tool-state")).to_have_text("denied")
    # The same after a reload, from the saved result.
    page.reload()
    expect(page.locator("details.tool-call .tool-state")).to_have_text("denied")


RECTS = """() => {
  const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return {composer: r(document.querySelector('.composer')), toasts: [...document.querySelectorAll('.toast')].map(r)};
}"""


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("size", [(1100, 760), (420, 640)], ids=["wide", "narrow"])
def test_toasts_never_cover_the_composer(page, setup, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    chat = setup.chat(title="Toasts")
    setup.fake.enqueue(S.reply("Something to copy."))
    open_chat(page, setup.server, chat, "Toasts")
    send(page, "hello")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Something to copy.")
    # A composer grown tall with a long draft, and three toasts stacked.
    page.locator(".composer-input").fill("\n".join(f"line {i}" for i in range(30)))
    for _ in range(3):
        replies(page).last.get_by_role("button", name="Copy reply").click()
    expect(page.locator(".toast")).to_have_count(3)
    rects = page.evaluate(RECTS)
    for toast in rects["toasts"]:
        assert not overlaps(toast, rects["composer"]), rects
        assert toast[1] >= 0 and toast[3] <= size[1], rects
