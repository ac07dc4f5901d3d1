// web/js/markdown.js under node: there is no DOM here, so DOMPurify cannot run
// and renderMarkdown must fall back to escaped plain text. The Markdown step
// (toHtml) is checked directly; sanitizing itself is the browser tests' part.
import { test } from "node:test";
import assert from "node:assert/strict";

import { toHtml, renderMarkdown } from "../../web/js/markdown.js";

test("remote images become a link and are never an <img>", () => {
  const html = toHtml("look: ![a cat](https://tracker.example/p.png?u=1)");
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /<a class="remote-image" href="https:\/\/tracker.example\/p.png\?u=1">a cat \(tracker.example\)<\/a>/);
});

test("inline data images stay images", () => {
  assert.match(toHtml("![dot](data:image/png;base64,iVBORw0KGgo=)"), /<img src="data:image\/png;base64,iVBORw0KGgo=" alt="dot">/);
});

test("code in a known language is highlighted, other code only escaped", () => {
  const py = toHtml("```python\nprint('<b>')\n```");
  assert.match(py, /<code class="hljs language-python"><span class="hljs-built_in">print<\/span>/);
  assert.doesNotMatch(py, /<b>/);
  assert.match(toHtml("```klingon\n<b>x</b>\n```"), /&lt;b&gt;x&lt;\/b&gt;/);
});

test("without a DOM to sanitize with, the text is shown escaped", () => {
  const html = renderMarkdown("<script>alert(1)</script>\n**bold**");
  assert.equal(html, "<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>**bold**</p>");
});

test("reply headings start at h3, under the page's own h1 and h2", () => {
  assert.match(toHtml("# Title\n\n## Part\n\n###### Deep"), /^<h3>Title<\/h3>\n<h4>Part<\/h4>\n<h6>Deep<\/h6>/);
});

test("the Markdown step makes no ids or names of its own (any in a reply are the model's)", () => {
  const html = toHtml("# Title\n\n## Part\n\nText[^1] and [a](#title).\n\n[^1]: a note\n\n- [ ] task\n\n| a |\n| - |\n| b |");
  assert.doesNotMatch(html, /\s(?:id|name)=/);
});
