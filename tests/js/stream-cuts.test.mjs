// web/app/stream-render.js cuts a reply into pieces that are rendered on their own.
// The promise: the pieces' HTML, joined, is exactly the whole text's HTML; and a cut
// found while the text was still growing stays a cut of the finished text (so a
// streamed reply and the same reply from history come out the same).
import { test } from "node:test";
import assert from "node:assert/strict";

import { safeCuts } from "../../web/app/stream-render.js";
import { toHtml } from "../../web/js/markdown.js";

const DOCS = {
  sections: Array.from({ length: 6 }, (_, i) => `## Section ${i}\n\nSome **prose** with \`code\` and a [link](https://example.com/${i}).\nA second line of the same paragraph.\n\n- first point\n- second point\n  - nested\n- third\n\n1. one\n2. two\n\n\`\`\`python\ndef f():\n\n    return ${i}\n\`\`\`\n\n> quoted\n\n`).join(""),
  looseList: "Intro\n\n- a\n\n- b\n\n  continued paragraph of b\n\n- c\n\nAfter the list.\n\n1. x\n\n2. y\n\nEnd.\n",
  listThenNumbers: "- a\n- b\n\n3. three\n4. four\n\nText\n",
  fences: "Before\n\n~~~\nblank lines inside\n\n\nstill code\n~~~\n\n````md\n```\nnested fence\n```\n\nmore\n````\n\nAfter\n",
  unclosedFence: "Text\n\n```js\nlet a = 1;\n\nlet b = 2;\n",
  indentedCode: "Para\n\n    code line\n\n    more code\n\nNext para\n",
  html: "<div>\nhtml block\n</div>\n\n<pre>\nraw\n\nstill pre\n</pre>\n\n<!--\ncomment\n\nstill comment\n-->\n\nAfter\n",
  table: "| a | b |\n|---|---|\n| 1 | 2 |\n\nText under\n\n| c |\n|---|\n| 3 |\n",
  setext: "Title\n=====\n\nSub\n---\n\n***\n\nText\n",
  quotes: "> one\n> two\n\n> three\n\nplain\n\n>lazy\ncontinuation\n\nend\n",
  crlf: "Para one\r\n\r\nPara two\r\n\r\n- item\r\n\r\nTail\r\n",
  numbersStartParagraph: "2024 was a year.\n\n100 reasons\n\nWords\n",
  listAfterParagraph: "Para\n\n- a\n- b\n\n1. c\n\n    code in item\n\n2. d\n\n  para of d\n\nText\n\n- e\n\n* f\n",
  indentedAfterList: "- item\n\n    more of the item\n\n        code in the item\n\nEnd\n",
  indentedCodeRuns: "Para\n\n    code a\n\n    code b\n\n- list\n\n    cont\n\n---\n\n- - -\n\nx\n",
  lazy: "- item\nlazy line\n\nNot lazy\n\n> quote\nlazy quote\n\n1) paren list\n\n2) second\n\ndone\n",
  fenceInList: "- a\n\n  ```\n  code\n\n  more\n  ```\n\n- b\n\nEnd\n",
  looseNested: "1. one\n\n   - sub\n\n   - sub2\n\n2. two\n\nAfter\n",
};

function pieces(text) {
  const cuts = safeCuts(text, 0);
  const out = [];
  let from = 0;
  for (const c of [...cuts, text.length]) { out.push(text.slice(from, c)); from = c; }
  return out;
}

for (const [name, text] of Object.entries(DOCS)) {
  test(`pieces render like the whole text: ${name}`, () => {
    assert.equal(pieces(text).map(toHtml).join(""), toHtml(text));
  });

  test(`cuts found while streaming stay cuts: ${name}`, () => {
    const final = new Set(safeCuts(text, 0));
    for (let n = 1; n <= text.length; n++) {
      for (const c of safeCuts(text.slice(0, n), 0)) assert.ok(final.has(c), `${name}: cut ${c} at length ${n}`);
    }
  });
}

test("the sections document is actually cut (the property is not vacuous)", () => {
  // Each section: heading, paragraph, the two lists (a list right after a list may
  // continue it, so no cut between them), code, quote.
  assert.equal(safeCuts(DOCS.sections, 0).length, 6 * 5 - 1);
});

test("a list after a paragraph is cut off, a list's own next item is not", () => {
  const text = DOCS.listAfterParagraph;
  const cuts = safeCuts(text, 0);
  assert.ok(cuts.includes(text.indexOf("- a")));
  assert.ok(!cuts.includes(text.indexOf("1. c")));
  assert.ok(!cuts.includes(text.indexOf("2. d")));
  assert.ok(cuts.includes(text.indexOf("Text")));
  assert.ok(cuts.includes(text.indexOf("- e")));
});

test("no cut inside a fence, a raw HTML block or a list", () => {
  const within = (text, a, b) => safeCuts(text, 0).filter((c) => c > text.indexOf(a) && c < text.indexOf(b));
  assert.deepEqual(within(DOCS.fences, "~~~", "still code"), []);
  assert.deepEqual(within(DOCS.html, "<pre>", "</pre>"), []);
  assert.deepEqual(within(DOCS.html, "<!--", "-->"), []);
  assert.deepEqual(within(DOCS.looseList, "- a", "- c"), []);
});

test("a cut starts scanning from a given cut", () => {
  const text = DOCS.sections;
  const all = safeCuts(text, 0);
  assert.deepEqual(safeCuts(text, all[3]), all.slice(4));
});
