"""No id or name from model output reaches the page (DOM clobbering), in real Chromium.

A model's `<a id="x">` would be `window.x`, and `<img name="getElementById">` or
`<form id=…>` would shadow the document's own properties. A reply carrying them in raw
HTML and inside Markdown is streamed, finished and drawn again from history; no element
of it has an id or a name, and the globals and document properties are what they were.
"""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, sign_in, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

DOT = "data:image/png;base64,iVBORw0KGgo="
REPLY = f"""Raw HTML first.

<a id="x" name="y" href="https://example.com/a">anchor</a>

<img name="getElementById" src="{DOT}" alt="dot"> <img id="cookie" src="{DOT}" alt="dot2">

<form id="forms" name="body"><input name="location" value="v"><button id="b1">press</button></form>

<div id="app">a div</div><p id="title" name="URL">a paragraph</p>

Then Markdown **with <a id="inline" name="domain" href="https://example.com/b">inline html</a>** and a
[plain link](https://example.com/c "t").

- an item <span id="items" name="images">span</span>
- [anchor link](#x)

| a | b |
| - | - |
| <b id="cell" name="forms">cell</b> | 2 |

### Heading {{#custom}}

Last line.
"""
# Every id and name above: none may be on an element, nor become a global.
MODEL_NAMES = ["x", "y", "getElementById", "cookie", "forms", "body", "location", "b1", "app", "title", "URL",
               "inline", "domain", "items", "images", "cell", "custom"]

# What clobbering would change: globals by those names and the document's own properties.
STATE = r"""
(names) => ({
  globals: Object.fromEntries(names.map((n) => [n, typeof window[n] === 'object' && window[n] instanceof Element
                                                    ? 'element' : typeof window[n]])),
  getElementById: document.getElementById === Document.prototype.getElementById,
  querySelector: document.querySelector === Document.prototype.querySelector,
  cookie: typeof document.cookie,
  body: document.body === document.documentElement.querySelector('body'),
  location: document.location === window.location,
  URL: typeof document.URL,
  domain: typeof document.domain,
  title: typeof document.title,
  forms: document.forms.length,
  images: document.images instanceof HTMLCollection,
  byId: names.filter((n) => document.getElementById(n) !== null),
})
"""

# Every id and name in the reply's message body, and which of the model's values appear anywhere in it.
IN_REPLY = r"""
(el, names) => {
  const body = el.querySelector('.msg-body');
  const attrs = [...body.querySelectorAll('[id], [name]')].map((e) => e.outerHTML.slice(0, 80));
  const anywhere = [...el.querySelectorAll('[id], [name]')]
    .flatMap((e) => [e.id, e.getAttribute('name')]).filter((v) => v && names.includes(v));
  return {attrs, anywhere, text: body.textContent};
}
"""


def assert_clean(page, reply, before):
    found = reply.evaluate(IN_REPLY, MODEL_NAMES)
    assert found["attrs"] == [] and found["anywhere"] == [], found
    assert page.evaluate(STATE, MODEL_NAMES) == before


def test_a_reply_cannot_clobber_the_page(page, setup):
    chat = setup.chat(title="E2E ids")
    cut = REPLY.index("Then Markdown")
    pieces = [REPLY[i:i + 5] for i in range(0, len(REPLY), 5)]
    first = [p for i, p in enumerate(pieces) if i * 5 < cut]
    setup.fake.enqueue([S.text(p) for p in first] + [S.hang()] + [S.text(p) for p in pieces[len(first):]])
    open_chat(page, setup.server, chat, "E2E ids")
    before = page.evaluate(STATE, MODEL_NAMES)  # "app" is the page's own root
    assert before["getElementById"] and before["byId"] == ["app"], before
    send(page, "Show me ids")
    setup.fake.wait_hanging()
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "streaming")
    expect(reply.locator(".msg-body")).to_contain_text("a paragraph")
    assert_clean(page, reply, before)  # the open part, rendered while it streams
    setup.fake.release()
    expect(reply).to_have_attribute("data-status", "complete")
    expect(reply.locator(".msg-body")).to_contain_text("Last line.")
    assert_clean(page, reply, before)
    # What is kept: the text, the links and the inline images, without their ids and names.
    body = reply.locator(".msg-body")
    expect(body.get_by_role("link", name="anchor", exact=True)).to_have_attribute("href", "https://example.com/a")
    expect(body.get_by_role("link", name="inline html")).to_have_attribute("href", "https://example.com/b")
    expect(body.locator("img")).to_have_count(2)
    expect(body.locator("table td").first).to_have_text("cell")
    page.reload()
    wait_chat_ready(page, "E2E ids")
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_contain_text("Last line.")
    assert_clean(page, reply, before)  # drawn from history


BOTH_PATHS = r"""
async ({prefix, cases}) => {
  const md = await import(prefix + '/js/markdown.js');
  return cases.map((text) => {
    const html = md.toHtml(text);
    const box = document.createElement('div');
    box.append(md.htmlFragment(html));
    return {text, plain: md.plainFragment(html) !== null,
            kept: [...box.querySelectorAll('[id], [name]')].map((e) => e.outerHTML)};
  });
}
"""


def test_both_rendering_paths_drop_ids_and_names(page, setup):
    """HTML of only the plain markup but with an id goes to DOMPurify, which drops it."""
    sign_in(page, setup.server)
    prefix = page.evaluate(
        "document.querySelector('script[src*=\"/app/main.js\"]').src.replace(/\\/app\\/main\\.js$/, '')")
    cases = ['<p id="x">para</p>', '<h3 id="top" name="n">head</h3>', 'a <em id="e">b</em> c',
             '<a name="getElementById" href="https://example.com">a</a>', '<table id="t"><tr><td>1</td></tr></table>',
             '<img name="images" src="' + DOT + '" alt="d">', "plain **text** and [a link](https://example.com)"]
    out = page.evaluate(BOTH_PATHS, {"prefix": prefix, "cases": cases})
    assert [c["text"] for c in out if c["kept"]] == [], out
    assert [c["text"] for c in out if c["plain"]] == [cases[-1]], out
