// The diff a write's approval card and tool row draw (web/js/diff-view.js): a unified diff
// parsed into kinds and line numbers, counted, and folded where long; a sentence is no diff.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { diffStat, foldLines, isDiff, parseDiff } from "../../web/js/diff-view.js";

const EDIT = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
const kinds = (lines) => lines.map((l) => l.kind).join(" ");

describe("parseDiff", () => {
  test("an edit: kinds, text without its mark, old and new line numbers, counts", () => {
    const d = parseDiff(EDIT);
    assert.equal(d.path, "notes.txt");
    assert.equal(d.created, false);
    assert.equal(kinds(d.lines), "hunk ctx del add ctx");
    assert.deepEqual(d.lines.slice(1).map((l) => [l.text, l.oldNo, l.newNo]),
      [["one", 1, 1], ["two", 2, null], ["TWO", null, 2], ["three", 3, 3]]);
    assert.equal(diffStat(d), "+1 \u22121");
  });

  test("a new file is all added, numbered from 1", () => {
    const d = parseDiff("--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+alpha\n+beta\n\\ No newline at end of file\n");
    assert.equal(d.path, "sub/new.txt");
    assert.equal(d.created, true);
    assert.equal(kinds(d.lines), "hunk add add note");
    assert.deepEqual(d.lines.filter((l) => l.kind === "add").map((l) => l.newNo), [1, 2]);
    assert.equal(d.lines[3].text, "No newline at end of file");
    assert.equal(diffStat(d), "+2 \u22120");
  });

  test("lines that look like headers inside a hunk stay lines; \\r\\n files keep their text", () => {
    const d = parseDiff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- old rule\r\n+++ new rule\r\n");
    assert.equal(kinds(d.lines), "hunk del add");
    assert.deepEqual(d.lines.slice(1).map((l) => l.text), ["-- old rule", "++ new rule"]);
  });

  test("a second hunk restarts the numbering where it says", () => {
    const d = parseDiff("--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n+b\n@@ -40,2 +40,3 @@\n k\n+n\n m\n");
    assert.deepEqual(d.lines.filter((l) => l.kind === "ctx").map((l) => [l.oldNo, l.newNo]), [[40, 40], [41, 42]]);
  });

  test("a sentence (binary, too large) is not a diff", () => {
    const said = "photo.png is a binary file (it holds NUL bytes or is not UTF-8 text), so no diff is shown.";
    assert.equal(isDiff(said), false);
    assert.equal(isDiff(EDIT), true);
    assert.deepEqual(parseDiff(said).lines, []);
    assert.equal(isDiff(undefined), false);
  });
});

describe("foldLines", () => {
  const ctx = (n) => Array.from({ length: n }, (_, i) => ({ kind: "ctx", text: `c${i}`, oldNo: i + 1, newNo: i + 1 }));
  const add = (n) => Array.from({ length: n }, (_, i) => ({ kind: "add", text: `a${i}`, oldNo: null, newNo: i + 1 }));

  test("a short diff is drawn whole", () => {
    const lines = parseDiff(EDIT).lines;
    assert.deepEqual(foldLines(lines), lines);
  });

  test("a long unchanged run keeps its ends and folds its middle; opening it shows it", () => {
    const lines = [...add(1), ...ctx(20), ...add(1)];
    const items = foldLines(lines, { context: 3 });
    assert.equal(kinds(items), "add ctx ctx ctx fold ctx ctx ctx add");
    const fold = items[4];
    assert.deepEqual([fold.count, fold.from, fold.to], [14, 4, 18]);
    assert.deepEqual(foldLines(lines, { context: 3, open: new Set([fold.from]) }), lines);
  });

  test("a long diff (a big new file) shows its start, then how many more lines there are", () => {
    const lines = add(500);
    const items = foldLines(lines, { max: 80 });
    assert.equal(items.length, 81);
    assert.deepEqual(items.slice(0, 80), lines.slice(0, 80));
    assert.deepEqual(items[80], { kind: "more", count: 420, from: 80, to: 500 });
    assert.deepEqual(foldLines(lines, { max: 80, all: true }), lines);
  });

  test("the more-marker counts the diff's own lines past the cut, folded or not", () => {
    const lines = [...add(79), ...ctx(30), ...add(5)];
    const items = foldLines(lines, { max: 80 });
    const more = items[items.length - 1];
    assert.equal(more.kind, "more");
    assert.equal(more.from, 80);
    assert.equal(more.count, lines.length - 80);
  });

  test("inputs are never changed", () => {
    const lines = Object.freeze(add(100).map((l) => Object.freeze(l)));
    assert.doesNotThrow(() => foldLines(lines, { max: 10 }));
  });
});
