// Search snippets split into plain and highlighted pieces (web/js/search-hits.js).
// Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { splitHits } from "../../web/js/search-hits.js";

const show = (pieces) => pieces.map((p) => (p.hit ? `[${p.text}]` : p.text)).join("");

test("hits become pieces of their own, in order, covering the whole snippet", () => {
  const pieces = splitHits("zebra zebra, a zebra herd", [[0, 5], [6, 11], [15, 20]]);
  assert.equal(show(pieces), "[zebra] [zebra], a [zebra] herd");
  assert.equal(pieces.map((p) => p.text).join(""), "zebra zebra, a zebra herd");
});

test("offsets count code points, so emoji and accents before a hit do not shift it", () => {
  assert.equal(show(splitHits("😀👩‍👩‍👧 café zebra", [[7, 11], [12, 17]])), "😀👩‍👩‍👧 [café] [zebra]");
});

test("markup in a snippet stays text", () => {
  const pieces = splitHits("<b>zebra</b> &amp;", [[3, 8]]);
  assert.deepEqual(pieces, [{ text: "<b>", hit: false }, { text: "zebra", hit: true }, { text: "</b> &amp;", hit: false }]);
});

test("bad ranges are skipped, never thrown on", () => {
  assert.equal(show(splitHits("abcdef", [[2, 1], [4, 99], [-1, 2], ["a", 3], null, [1, 3], [2, 4]])), "a[bc]def");
  assert.equal(show(splitHits("abc", undefined)), "abc");
  assert.deepEqual(splitHits("", [[0, 1]]), []);
  assert.deepEqual(splitHits(null, []), []);
});
