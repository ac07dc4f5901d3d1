"""Helpers the e2e tests share: signing in, opening a chat, screenshots."""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from playwright.sync_api import expect

CHROMIUM = "/usr/bin/chromium"
# Headless Chromium is the whole browser: each new page also starts its omnibox popup,
# a web page of its own that takes as much CPU as Numi's page while that loads (seen in
# a trace; Puppeteer turns it off for the same reason). Numi's window has no omnibox.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"

# Counts the chat's message bubbles after each change to the page (a MutationObserver
# reports once per task that changed it), and the history pages the page asks for.
DRAWN_SCRIPT = r"""
(() => {
  const seen = window.__drawn = {counts: [], pages: []};
  const count = () => {
    const n = document.querySelectorAll('.messages article.msg').length;
    if (n && n !== seen.counts[seen.counts.length - 1]) seen.counts.push(n);
  };
  document.addEventListener('DOMContentLoaded', () =>
    new MutationObserver(count).observe(document.body, {childList: true, subtree: true}));
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name.includes('/messages')) seen.pages.push(e.name);
  }).observe({type: 'resource', buffered: true});
})();
"""


def reload_counting_bubbles(page, title: str) -> list[int]:
    """Reload the open chat and wait until the socket has re-sent its last turn (one that
    ended under 180 s ago) and the page has read its newest page again at that turn's end
    (the second /messages read), then two frames more; the bubble counts drawn on the way."""
    reads = []

    def second_read(request) -> bool:
        if "/messages?" in request.url:
            reads.append(request.url)
        return len(reads) == 2

    page.add_init_script(DRAWN_SCRIPT)
    with page.expect_request_finished(second_read):
        page.reload()
    wait_chat_ready(page, title)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate("window.__drawn.counts")


def sign_in(page, server, route: str = "") -> None:
    """Open the app as the desktop shell does (`/?token=…` sets the session cookie), then `route`."""
    base = f"http://127.0.0.1:{server.port}"
    page.goto(f"{base}/?token={server.token}")
    page.wait_for_url(re.compile(re.escape(base) + r"/(#.*)?$"))
    if route:
        page.goto(f"{base}/#{route}")
    # The app redraws its list and screens once its first reads (and the app socket's
    # `ready` refresh) are in; a test that starts clicking before that can have its
    # open menu or focused field redrawn under it.
    page.wait_for_load_state("networkidle")


def import_in_settings(page, server, path) -> None:
    """Open Settings → Data and choose `path` in its import input."""
    sign_in(page, server, "/settings/data")
    # Settings redraws once its data (providers, models, settings) is in: wait for
    # that, so the file input used below is the one that stays.
    page.wait_for_load_state("networkidle")
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    page.locator("#import-file").set_input_files(str(path))


def send(page, text: str) -> None:
    """Type `text` into the message box and press Enter."""
    box = page.locator(".composer-input")
    box.fill(text)
    box.press("Enter")


def replies(page):
    return page.locator("article.msg.assistant")


def open_chat(page, server, chat_id: str, title: str) -> None:
    """Sign in and open a chat (made with `title`); return once its history is shown and its socket is open."""
    sign_in(page, server, f"/c/{chat_id}")
    wait_chat_ready(page, title)


def wait_chat_ready(page, title: str) -> None:
    # The page title comes from the chat row, read with the history; the connection
    # note is drawn in that same frame and is empty only once the socket is open.
    expect(page).to_have_title(f"{title} — Numi")
    expect(page.locator(".chat-header .conn")).to_have_text("")


def shot(page, name: str, dark: bool = True) -> None:
    """Save `name`-light.png (and `name`-dark.png) under test-artifacts/e2e/ when NUMI_SHOTS=1."""
    # Pictures for a person to look at, not checks: a third of a second of CPU each, which
    # make test does without (NUMI_SHOTS in the README).
    if os.environ.get("NUMI_SHOTS") != "1":
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.emulate_media(color_scheme="light")
    page.screenshot(path=str(ARTIFACTS / f"{name}-light.png"))
    if dark:
        page.emulate_media(color_scheme="dark")
        page.screenshot(path=str(ARTIFACTS / f"{name}-dark.png"))
        page.emulate_media(color_scheme="light")


def wait_until(predicate, what: str, timeout: float = 10.0) -> None:
    """Poll a condition outside the page (the server's saved state) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting until {what}"
        time.sleep(0.05)
