// Where math starts and ends in a reply (web/js/markdown-math.js): the delimiter rules,
// and that marked keeps code spans, code blocks and prices as text.
import { test } from "node:test";
import assert from "node:assert/strict";

import { inlineMath, blockMath, MAY_HAVE_MATH } from "../../web/js/markdown-math.js";
import { toHtml } from "../../web/js/markdown-html.js";

const tex = (src) => inlineMath(src)?.tex ?? null;

test("$…$ is inline math when it opens and closes against non-space", () => {
  assert.deepEqual(inlineMath("$x^2$ rest"), { raw: "$x^2$", tex: "x^2", display: false });
  assert.equal(tex("$a \\$ b$"), "a \\$ b"); // an escaped dollar does not close
  assert.equal(tex("$ x$"), null); // a space after the opening $
  assert.equal(tex("$x $"), null); // a space before the closing $
  assert.equal(tex("$x$5"), null); // a digit after the closing $: a price
  assert.equal(tex("$"), null);
  assert.equal(tex("$x"), null); // never closed
});

test("prices stay text", () => {
  for (const text of ["$5 and $10", "It costs $5, or $6.", "US$5/$10 each", "from $3 to $4.50", "$5 $"]) {
    assert.equal(tex(text), null, text);
    assert.doesNotMatch(toHtml(text), /math-/, text);
  }
});

test("$$…$$ and \\[…\\] are display math, \\(…\\) inline", () => {
  assert.deepEqual(inlineMath("$$ a + b $$ x"), { raw: "$$ a + b $$", tex: "a + b", display: true });
  assert.deepEqual(inlineMath("\\[a\\] x"), { raw: "\\[a\\]", tex: "a", display: true });
  assert.deepEqual(inlineMath("\\(a\\) x"), { raw: "\\(a\\)", tex: "a", display: false });
  assert.equal(inlineMath("$$  $$"), null);
  assert.equal(inlineMath("\\(a"), null);
});

test("a display block runs from a $$ or \\[ line to its end, never across a blank line", () => {
  assert.deepEqual(blockMath("$$\nx^2\n$$\n\nafter"), { raw: "$$\nx^2\n$$\n\n", tex: "x^2" });
  assert.deepEqual(blockMath("\\[\n\\sum_k k\n\\]"), { raw: "\\[\n\\sum_k k\n\\]", tex: "\\sum_k k" });
  assert.equal(blockMath("$$\nx\n\ny\n$$"), null);
  assert.equal(blockMath("    $$x$$"), null); // indented code
});

test("marked writes placeholders holding the TeX as escaped text", () => {
  assert.equal(toHtml("a $x<y$ b").trim(), '<p>a <span class="math-inline">x&lt;y</span> b</p>');
  assert.equal(toHtml("$$\n\\frac{a}{b}\n$$").trim(), '<div class="math-display">\\frac{a}{b}</div>');
  assert.equal(toHtml("a $$x$$ b").trim(), '<p>a <span class="math-display">x</span> b</p>');
});

test("code spans and code blocks keep their dollars", () => {
  assert.equal(toHtml("`$x$` and $y$").trim(), '<p><code>$x$</code> and <span class="math-inline">y</span></p>');
  assert.doesNotMatch(toHtml("```\n$x$\n$$\ny\n$$\n```"), /math-/);
  assert.doesNotMatch(toHtml("    $x$"), /math-/);
  assert.equal(toHtml("\\$x$").trim(), "<p>$x$</p>"); // an escaped dollar opens nothing
});

test("text without a delimiter skips the math parser (cheap test)", () => {
  assert.equal(MAY_HAVE_MATH.test("plain words, **bold** and \\* escapes"), false);
  for (const text of ["$x$", "\\(x\\)", "\\[x\\]"]) assert.equal(MAY_HAVE_MATH.test(text), true, text);
});

test("only a closed ```mermaid fence is marked to be drawn", () => {
  assert.match(toHtml("```mermaid\ngraph TD\nA-->B\n```"), /<code class="language-mermaid mermaid">graph TD\nA--&gt;B\n<\/code>/);
  assert.match(toHtml("x\n```mermaid\ngraph TD\nA-->B"), /<code class="language-mermaid">/);
});

test("task lists keep their checked state in marked's output", () => {
  const html = toHtml("- [x] done\n- [ ] open");
  assert.match(html, /<li><input checked="" disabled="" type="checkbox"> done<\/li>/);
  assert.match(html, /<li><input disabled="" type="checkbox"> open<\/li>/);
});
