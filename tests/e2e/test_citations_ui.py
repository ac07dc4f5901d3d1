"""Citations in a real Chromium against the real server and the fake provider (CONTRACT §8): a
reply's `[n]` become superscript links to its saved sources, which are listed under it as text;
a marker opens outside the app's window (a new browsing context without an opener: the desktop
shell hands such links to the system browser) and the page itself stays; code keeps its `[n]`;
a `[n]` naming no source stays text; a page's snippet or title with markup is only ever text.

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or on the server's saved state.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.test_a11y import low_contrast
from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in
from tests.fakeprovider import script as S
from tests.fakesearch import FakeSearch

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

ANSWER = ("Paris is the capital of France [1], and has been since 987 [2][1]. "
          "Nothing says so in [3].\n\n"
          "In code it stays as written: `items[1]` and\n\n```python\nitems[2] = 0\n```\n")
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>'


def answered_chat(setup, title: str) -> tuple[str, int]:
    """A chat whose reply is ANSWER, written by a real turn; → (chat id, the reply's id)."""
    chat = setup.chat(title=title)
    setup.fake.enqueue(S.reply(ANSWER))
    sock = setup.socket(chat)
    try:
        sock.send(type="send", request_id="r1", content="What is the capital of France?")
        sock.until("turn_end")
    finally:
        sock.close()
    reply = [m for m in setup.messages(chat) if m["role"] == "assistant"][-1]
    assert reply["content"] == ANSWER
    return chat, reply["id"]


def save_sources(setup, message_id: int, sources: list[dict]) -> None:
    """Give a saved reply its sources, as a turn whose tools found them saves them."""
    con = sqlite3.connect(setup.server.data_dir / "numi.db", timeout=10)
    with con:
        con.execute("UPDATE message SET citation_sources_json = ? WHERE id = ?", (json.dumps(sources), message_id))
    con.close()


def sources_for(setup) -> list[dict]:
    return [
        {"n": 1, "title": "Paris — Wikipedia", "url": f"{setup.fake.url}/wiki/Paris", "snippet": "Paris is the capital."},
        {"n": 2, "title": f"History {HOSTILE}", "url": "https://www.history.example/capetians?a=1&b=2",
         "snippet": f"Hugh Capet {HOSTILE}"},
    ]


def test_a_reply_cites_its_sources_as_superscript_links_listed_under_it(page, context, setup):
    chat, reply_id = answered_chat(setup, "E2E cites")
    sources = sources_for(setup)
    save_sources(setup, reply_id, sources)
    open_chat(page, setup.server, chat, "E2E cites")
    body = replies(page).last.locator(".msg-body")
    markers = body.locator("sup.cite a")
    # [1], [2] and [1] again: three markers, each reading its number; [3] names no source.
    expect(markers).to_have_text(["1", "2", "1"])
    expect(body).to_contain_text("Nothing says so in [3].")
    for i, n in enumerate([1, 2, 1]):
        link = markers.nth(i)
        expect(link).to_have_attribute("href", re.compile("^" + re.escape(sources[n - 1]["url"].split("?")[0])))
        expect(link).to_have_attribute("target", "_blank")
        expect(link).to_have_attribute("rel", re.compile(r"\bnoopener\b"))
    expect(markers.first).to_have_accessible_name(f"Source 1: Paris — Wikipedia ({setup.fake.url.split('//')[1].split(':')[0]})")
    # Code keeps its brackets: no marker inside inline code or a code block.
    expect(body.locator("code").first).to_have_text("items[1]")
    expect(body.locator("pre code")).to_contain_text("items[2] = 0")
    expect(body.locator("code sup, pre sup")).to_have_count(0)

    # The list under the reply: numbered as cited, title (a link out), site, snippet — as text.
    listed = replies(page).last.locator(".msg-sources li")
    expect(listed).to_have_count(2)
    assert [listed.nth(i).get_attribute("value") for i in range(2)] == ["1", "2"]
    expect(listed.locator(".source-title")).to_have_text(["Paris — Wikipedia", f"History {HOSTILE}"])
    expect(listed.locator(".source-site")).to_have_text(["127.0.0.1", "history.example"])
    expect(listed.nth(1).locator(".source-snippet")).to_have_text(f"Hugh Capet {HOSTILE}")
    for a in [listed.nth(0).locator("a"), listed.nth(1).locator("a")]:
        expect(a).to_have_attribute("target", "_blank")
        expect(a).to_have_attribute("rel", re.compile(r"\bnoopener\b"))
    # Nothing of the page's markup became markup here, nor ran.
    assert replies(page).last.locator(".msg-sources img, .msg-sources script, .msg-sources b").count() == 0
    assert page.evaluate("window.__pwned") is None
    # Copy gives the text with the sources it cites after it, so its numbers lead somewhere once pasted.
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=f"http://127.0.0.1:{setup.server.port}")
    replies(page).last.get_by_role("button", name="Copy reply").click()
    expect(page.locator(".toast")).to_contain_text("Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.endswith(f"\n\nSources:\n[1] Paris — Wikipedia — {sources[0]['url']}\n"
                           f"[2] History {HOSTILE} — {sources[1]['url']}\n"), copied
    # Readable in both themes: 4.5:1 for the markers and every line of the list.
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, [".cite-link", ".msg-sources summary", ".source-title", ".source-site",
                                   ".source-snippet"]) == [], theme
    page.emulate_media(color_scheme="light")
    shot(page, "citations-01-reply")


def test_a_marker_opens_its_source_outside_the_window_and_the_page_stays(page, context, setup):
    chat, reply_id = answered_chat(setup, "E2E cite click")
    sources = sources_for(setup)
    save_sources(setup, reply_id, sources)
    open_chat(page, setup.server, chat, "E2E cite click")
    marker = replies(page).last.locator("sup.cite a").first
    expect(marker).to_have_text("1")
    here = page.url
    # Keyboard: the marker is a link in the Tab order; Enter opens it.
    marker.focus()
    expect(marker).to_be_focused()
    with context.expect_page() as opened:
        page.keyboard.press("Enter")
    popup = opened.value
    popup.wait_for_load_state("domcontentloaded")
    assert popup.url == sources[0]["url"]
    # A new browsing context with no way back to the app (noopener), and the app did not move.
    assert popup.evaluate("window.opener") is None
    assert page.url == here
    expect(replies(page).last.locator("sup.cite a")).to_have_count(3)
    popup.close()


def test_an_empty_chat_says_how_to_turn_web_search_on(page, setup):
    open_chat(page, setup.server, setup.chat(title="E2E no search"), "E2E no search")
    hint = page.locator(".empty .web-search-hint")
    expect(hint).to_contain_text("Web search is off")
    hint.get_by_role("link", name="Settings → Web search").click()
    expect(page.get_by_role("heading", name="Web search", exact=True)).to_be_visible()
    expect(page.get_by_label("Search service")).to_have_value("")


@pytest.fixture
def searxng(setup):
    """A fake SearXNG on loopback set as the search service, and a model that uses tools."""
    fake = FakeSearch("searxng")
    fake.results = [("Paris — Wikipedia", "https://fr.example/wiki/Paris", "Paris is the <b>capital</b> of France."),
                    ("The Capetians", "https://history.example/987", "Hugh Capet made Paris his seat in 987.")]
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    r = setup.api.patch("/api/settings", {"web_search": {"backend": "searxng", "url": fake.url}})
    assert r.status == 200, r
    yield fake
    fake.close()


def test_a_turn_that_searches_cites_its_sources_while_it_streams_and_after(page, setup, searxng):
    chat = setup.chat(title="E2E live cites")
    setup.fake.enqueue([S.tool_call(0, "s1", "web_search", json.dumps({"query": "capital of France"}))],
                       [S.text("Paris is the capital [1]"), S.hang(), S.text(", since 987 [2]. Not [3].")])
    open_chat(page, setup.server, chat, "E2E live cites")
    send(page, "What is the capital of France?")
    setup.fake.wait_hanging()
    last = replies(page).last
    # While the reply is still being written, its first marker links to the source found.
    expect(last).to_have_attribute("data-status", "streaming")
    expect(last.locator(".msg-body sup.cite a")).to_have_text(["1"])
    expect(last.locator(".msg-body sup.cite a")).to_have_attribute("href", "https://fr.example/wiki/Paris")
    expect(last.locator(".msg-sources li .source-title")).to_have_text(["Paris — Wikipedia", "The Capetians"])
    setup.fake.release()
    expect(last).to_have_attribute("data-status", "complete")
    expect(last.locator(".msg-body sup.cite a")).to_have_text(["1", "2"])
    expect(last.locator(".msg-body")).to_contain_text("Not [3].")
    # The search's own step shows no list: the turn's sources went on with its last reply.
    expect(page.locator(".msg-sources:visible")).to_have_count(1)
    expect(last.locator(".msg-sources li .source-snippet").first).to_have_text("Paris is the <b>capital</b> of France.")

    # Saved with the reply: the same after a reload.
    saved = [m for m in setup.messages(chat) if m["role"] == "assistant"][-1]
    assert [s["n"] for s in saved["sources"]] == [1, 2]
    page.reload()
    last = replies(page).last
    expect(last.locator(".msg-body sup.cite a")).to_have_text(["1", "2"])
    expect(last.locator(".msg-sources li")).to_have_count(2)
    expect(page.locator(".msg-sources:visible")).to_have_count(1)
    shot(page, "citations-02-live")


def settings_section(page, setup):
    sign_in(page, setup.server, "/settings/web")
    section = page.locator("section.s-panel[data-section='web']")
    expect(section.get_by_role("heading", name="Web search", exact=True)).to_be_visible()
    return section


def test_settings_choose_a_service_set_and_remove_its_key(page, setup):
    section = settings_section(page, setup)
    state = section.locator(".web-search-state")
    expect(state).to_have_text("Web search is off: models cannot look anything up.")
    service = section.get_by_label("Search service")
    expect(service).to_have_value("")
    # SearXNG: its address, no key.
    service.select_option("searxng")
    address = section.get_by_label("SearXNG address")
    expect(address).to_be_visible()
    expect(section.get_by_label("API key for Brave Search")).to_have_count(0)
    section.get_by_role("button", name="Save").click()
    expect(address).to_have_attribute("aria-invalid", "true")  # an address is needed
    address.fill("http://127.0.0.1:8888")
    section.get_by_role("button", name="Save").click()
    expect(state).to_contain_text("search the web with SearXNG")
    assert setup.api.get("/api/settings").body["web_search"]["url"] == "http://127.0.0.1:8888"

    # Brave without its key: saved, off, and the sentence says why.
    service.select_option("brave")
    expect(address).to_be_hidden()
    key = section.get_by_label("API key for Brave Search")
    expect(key).to_be_visible()
    section.get_by_role("button", name="Save").click()
    expect(state).to_contain_text("Brave Search needs an API key")
    expect(section.locator(".chip")).to_have_text("no key")
    expect(section.get_by_role("button", name="Remove key")).to_be_hidden()

    # The key: set (never shown again), then removed.
    key.fill("BSA-test-key-0123456789")
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".chip")).to_have_text("key set")
    expect(key).to_have_value("")
    expect(state).to_contain_text("search the web with Brave Search")
    ws = setup.api.get("/api/settings").body["web_search"]
    assert ws["backend"] == "brave" and ws["has_key"] is True
    section.get_by_role("button", name="Remove key").click()
    expect(section.locator(".chip")).to_have_text("no key")
    expect(state).to_contain_text("Brave Search needs an API key")
    assert setup.api.get("/api/settings").body["web_search"]["has_key"] is False

    # None: off again, and an empty chat says how to turn it on.
    service.select_option("")
    section.get_by_role("button", name="Save").click()
    expect(state).to_have_text("Web search is off: models cannot look anything up.")
    assert setup.api.get("/api/settings").body["web_search"]["backend"] is None
