"""Math (KaTeX), task lists and Mermaid diagrams in replies, in real Chromium: each renders,
what only looks like math (prices, code) stays text, and hostile TeX or diagrams stay inert."""
from __future__ import annotations

import os
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, wait_chat_ready, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

MATH = r"""Euler: $e^{i\pi} + 1 = 0$ and \(a^2 + b^2 = c^2\).

$$
\int_0^1 x^2 \, dx = \frac{1}{3}
$$

\[ \sum_{k=1}^{n} k = \frac{n(n+1)}{2} \]

Prices: it costs $5 and $10, or US$5/$10 each.

Code keeps its dollars: `echo $HOME$` and

```sh
echo "$PATH$"
```

- [x] done item
- [ ] open item
"""


def stream(setup, page, title, reply, prompt="go", piece=7):
    chat = setup.chat(title=title)
    setup.fake.enqueue([S.text(reply[i:i + piece]) for i in range(0, len(reply), piece)])
    open_chat(page, setup.server, chat, title)
    send(page, prompt)
    last = replies(page).last
    expect(last).to_have_attribute("data-status", "complete")
    return last


def check_math(body):
    expect(body.locator(".katex")).to_have_count(4)
    expect(body.locator(".katex-display")).to_have_count(2)
    expect(body.locator(".math-set")).to_have_count(4)
    expect(body).to_contain_text("it costs $5 and $10, or US$5/$10 each.")
    expect(body.locator("p code")).to_have_text("echo $HOME$")
    expect(body.locator("pre code")).to_have_text('echo "$PATH$"\n')
    boxes = body.locator("li > input")
    expect(boxes).to_have_count(2)
    # Read until it holds: the body may be drawn again meanwhile (the worker's render after a first one).
    wanted = [["checkbox", True, True, ["checked", "disabled", "type"]], ["checkbox", True, False, ["disabled", "type"]]]
    wait_until(lambda: boxes.evaluate_all(
        "(els) => els.map((e) => [e.type, e.disabled, e.checked, e.getAttributeNames().sort()])") == wanted,
        f"the task list's boxes to be {wanted}")


def test_math_prices_code_and_task_lists(page, setup):
    last = stream(setup, page, "E2E math", MATH)
    check_math(last.locator(".msg-body"))
    # KaTeX's fonts come from the app itself (CSP font-src 'self').
    assert page.evaluate("() => [...document.styleSheets].some((s) => (s.href || '').includes('/vendor/katex/'))")
    page.reload()
    wait_chat_ready(page, "E2E math")
    check_math(replies(page).last.locator(".msg-body"))  # drawn from history


def test_a_reply_without_math_or_diagrams_loads_neither(page, setup):
    last = stream(setup, page, "E2E plain", "Just **words**, a [link](https://example.com) and\n\n- a list\n")
    expect(last.locator(".msg-body li")).to_have_text("a list")
    assert page.evaluate("""() => ({katex: [...document.styleSheets].some((s) => (s.href || '').includes('katex')),
                                    mermaid: typeof window.mermaid})""") == {"katex": False, "mermaid": "undefined"}


HOSTILE_TEX = r"""Link: $\href{javascript:window.__xss=1}{click}$ and $\url{javascript:window.__xss=2}$.

Huge: $\rule{100000em}{100000em}$ end.

Bomb: $\def\a{\a\a}\a$ and $\gdef\b{\b\b\b}\b$.

Html: $\htmlClass{x}{y}$ $\htmlStyle{background:url(https://tracker.example/p)}{z}$ $\includegraphics{https://tracker.example/i.png}$

Raw: $x$ <span class="math-inline">\href{javascript:window.__xss=3}{forged}</span> and
<input type="text" value="typed"> <input type="checkbox" checked> <input type="checkbox" disabled checked
onclick="window.__xss=4" form="f" name="n" value="v">

- [x] a task beside <b>raw</b> HTML (so sanitized by DOMPurify)
"""


def test_hostile_tex_is_inert(page, setup):
    last = stream(setup, page, "E2E tex", HOSTILE_TEX)
    body = last.locator(".msg-body")
    expect(body).to_contain_text("Raw:")
    expect(body.locator(".math-set")).to_have_count(10)
    found = body.evaluate(r"""(el) => ({
      links: [...el.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      events: [...el.querySelectorAll('*')].flatMap((e) => e.getAttributeNames().filter((n) => /^on/i.test(n))),
      styles: [...el.querySelectorAll('[style]')].map((e) => e.getAttribute('style')).filter((s) => /url\(/i.test(s)),
      imgs: el.querySelectorAll('img').length,
      tallest: Math.max(...[...el.querySelectorAll('.katex *')].map((e) => e.getBoundingClientRect().height)),
      widest: Math.max(...[...el.querySelectorAll('.katex *')].map((e) => e.getBoundingClientRect().width)),
      errors: el.querySelectorAll('.katex-error').length,
      inputs: [...el.querySelectorAll('input')].map((e) => e.getAttributeNames().sort().join()),
    })""")
    assert found["links"] == [] and found["events"] == [] and found["styles"] == [] and found["imgs"] == 0, found
    # \rule is held to maxSize (20em), not 100000em.
    assert found["tallest"] < 800 and found["widest"] < 800, found
    assert found["errors"] >= 2, found  # the macro bombs show as their source
    # Of the raw inputs only the disabled checkbox is left, and of it only that.
    # The task list's checkbox keeps its checked state through DOMPurify too.
    assert found["inputs"] == ["checked,disabled,type", "checked,disabled,type"], found
    assert page.evaluate("() => typeof window.__xss") == "undefined"


FLOW = """```mermaid
graph TD
  A[Start] --> B{Choice}
  B -->|yes| C[Done]
```"""

HOSTILE_MERMAID = """```mermaid
graph TD
  A["<img src=x onerror=window.__xss=1>"] --> B["<script>window.__xss=2</script>"]
  B --> C[plain]
  click A callback "tip"
  click B "javascript:window.__xss=3"
  click C href "https://tracker.example/c"
```"""

BROKEN = """```mermaid
graph TD
  A --> --> ??? [
```"""


def svg_of(img) -> str:
    src = img.get_attribute("src")
    assert src.startswith("data:image/svg+xml;charset=utf-8,"), src[:60]
    return urllib.parse.unquote(src.split(",", 1)[1])


def assert_inert(svg: str):
    low = svg.lower()
    for bad in ("<script", "foreignobject", " onerror", " onclick", " onload", "href=", "javascript:", "<a "):
        assert bad not in low, (bad, svg[:400])


def test_mermaid_diagrams_are_lazy_inert_images(page, setup):
    filler = "\n\n".join(f"Paragraph {i} of text after the diagrams." for i in range(60))
    reply = f"{FLOW}\n\n{HOSTILE_MERMAID}\n\n{BROKEN}\n\n{filler}\n"
    # In one piece: streamed, each diagram is briefly the reply's visible end (and may rightly
    # be drawn then); this test is about diagrams that are never in view.
    last = stream(setup, page, "E2E mermaid", reply, piece=len(reply))
    body = last.locator(".msg-body")
    figures = body.locator("figure.mermaid-figure")
    expect(figures).to_have_count(3)
    # Off screen (the view follows the reply's end): not drawn, Mermaid not even loaded.
    assert figures.evaluate_all("(els) => els.map((f) => f.dataset.state)") == ["waiting"] * 3
    assert page.evaluate("() => typeof window.mermaid") == "undefined"
    figures.first.scroll_into_view_if_needed()
    expect(figures.nth(0)).to_have_attribute("data-state", "drawn")
    figures.nth(2).scroll_into_view_if_needed()
    expect(figures.nth(1)).to_have_attribute("data-state", "drawn")
    expect(figures.nth(2)).to_have_attribute("data-state", "failed")
    flow = svg_of(figures.nth(0).locator(".mermaid-diagram img"))
    assert "<svg" in flow and "Start" in flow and "Choice" in flow
    assert_inert(flow)
    hostile = svg_of(figures.nth(1).locator(".mermaid-diagram img"))
    assert_inert(hostile)
    assert "<img" not in hostile.lower()
    # The source stays one click away; a diagram that fails shows it, with a note.
    expect(figures.nth(0).locator("details.mermaid-source pre code")).to_contain_text("A[Start] --> B{Choice}")
    expect(figures.nth(2).locator(".mermaid-note")).to_contain_text("could not be drawn")
    expect(figures.nth(2).locator("details.mermaid-source")).to_have_attribute("open", "")
    expect(figures.nth(2).locator("pre code")).to_be_visible()
    # Nothing of a diagram is live in the page: no svg, script, link or handler inside the figures.
    assert body.evaluate("""(el) => [...el.querySelectorAll('figure *')].filter((e) =>
        /^(svg|script|a|foreignobject|iframe)$/i.test(e.tagName) || e.getAttributeNames().some((n) => /^on/i.test(n))).length""") == 0
    assert page.evaluate("() => typeof window.__xss") == "undefined"


def test_a_streaming_diagram_is_drawn_only_once_its_fence_closes(page, setup):
    chat = setup.chat(title="E2E fence")
    start = "Here:\n```mermaid\ngraph TD\n  A --> B\n"
    setup.fake.enqueue([S.text(start[i:i + 5]) for i in range(0, len(start), 5)] + [S.hang()]
                       + [S.text("```\n\nAfter.")])
    open_chat(page, setup.server, chat, "E2E fence")
    send(page, "draw")
    setup.fake.wait_hanging()
    last = replies(page).last
    expect(last.locator(".msg-body")).to_contain_text("A --> B")
    assert last.locator("figure.mermaid-figure").count() == 0
    assert page.evaluate("() => typeof window.mermaid") == "undefined"
    setup.fake.release()
    expect(last).to_have_attribute("data-status", "complete")
    expect(last.locator("figure.mermaid-figure")).to_have_attribute("data-state", "drawn")
