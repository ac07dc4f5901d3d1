"""The two ways model text becomes nodes (web/js/markdown.js), in real Chromium: HTML that
holds only the plain markup marked writes is used as the browser parsed it; anything else
goes through DOMPurify. For Markdown without raw HTML both must give the same nodes, and
whatever the check lets through must be what DOMPurify would have kept."""
from __future__ import annotations

from tests.e2e.ui import sign_in

PLAIN = [
    "# Title\n\n## Part\n\n#### Deep *one*",
    "Some **bold**, *italic*, ~~struck~~ and `code <b>` text &amp; &copy; 5 < 6 > 4.\nNext line.  \nHard break.",
    "[a link](https://example.com/a?b=1&c=2 \"its title\") and <https://example.org> and www.example.net "
    "and mail@example.com and [anchor](#part) and [mail](mailto:me@example.com)",
    "[ref][1] and [other] one.\n\n[1]: https://example.com/ref \"Ref\"\n[other]: http://example.com/other",
    "3. three\n4. four\n   - nested *a*\n   - nested b\n5. five",
    "- loose one\n\n- loose two\n\n  second paragraph\n- three",
    "> quoted **text**\n> - with a list\n>\n> > and a nested quote",
    "| left | centre | right |\n| :--- | :----: | ----: |\n| `a` | **b** | [c](https://c.example) |\n| 1 | 2 | 3 |",
    "```python\ndef f(x: int) -> str:\n    return f\"<{x}>\"  # comment\n```\n\n```klingon\n<b>qapla'</b>\n```"
    "\n\n```\nno language & <tags>\n```\n\n    indented code",
    "Before\n\n---\n\nafter \\*not emphasis\\* and \\<not a tag\\>",
    "![a dot](data:image/png;base64,iVBORw0KGgo=) and ![remote](https://tracker.example/p.png \"t\")",
    "Text with a footnote-like [^1] and trailing spaces   ",
    "- [ ] a task\n- [x] done",
    "Math $x^2$ and \\(y\\)\n\n$$\n\\frac{a}{b}\n$$",
]

# Each needs DOMPurify: raw HTML, an unsafe link or image, an input that is no task box.
RAW = [
    "<b>raw</b> tag",
    "<img src=x onerror=\"window.__xss=1\">",
    "[click](javascript:window.__xss=2)",
    "<input type=\"checkbox\" checked>",
    "<input type=\"text\" disabled>",
    "<div id=\"app\">clobber</div>",
    "![svg](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",
    "text <span style=\"color:red\">inline html</span>",
    "<!-- a comment -->\n\nafter",
]

COMPARE = r"""
async ({prefix, plain, raw}) => {
  const md = await import(prefix + '/js/markdown.js');
  const html = (fragment) => { const d = document.createElement('div'); d.append(fragment); return d.innerHTML; };
  const out = {plain: [], raw: []};
  for (const text of plain) {
    const source = md.toHtml(text);
    const checked = md.plainFragment(source);
    out.plain.push({text, checked: checked && html(checked), purified: html(md.purified(source))});
  }
  for (const text of raw) {
    const source = md.toHtml(text);
    out.raw.push({text, checked: md.plainFragment(source) !== null});
  }
  return out;
}
"""


def test_plain_markdown_skips_the_sanitizer_and_gives_what_it_would(page, setup):
    sign_in(page, setup.server)
    prefix = page.evaluate(
        "document.querySelector('script[src*=\"/app/main.js\"]').src.replace(/\\/app\\/main\\.js$/, '')")
    out = page.evaluate(COMPARE, {"prefix": prefix, "plain": PLAIN, "raw": RAW})
    for case in out["plain"]:
        assert case["checked"] is not None, case
        assert case["checked"] == case["purified"], case
    assert [c["text"] for c in out["raw"] if c["checked"]] == []
    # Nothing of the traps survived either way, and no page script ran.
    assert page.evaluate("() => typeof window.__xss") == "undefined"
