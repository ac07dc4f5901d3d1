// What the documents panel hands the composer and the disk (web/js/doc-quotes.js).
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { composeMessage, documentsLabel, errorQuote, fence, fileName, previewError, previewable, selectionQuote, QUOTE_MAX }
  from "../../web/js/doc-quotes.js";

const doc = { id: "doc_1a2b3c4d5e6f7a8b", title: "fib.py", language: "python", version: 3 };

test("a fence is longer than any run of backticks in the text", () => {
  assert.equal(fence("plain"), "```");
  assert.equal(fence("a ``` b"), "````");
  assert.equal(fence("``````"), "```````");
});

test("a selection is quoted with its document, lines and language, in a fence it cannot close", () => {
  const q = selectionQuote(doc, 2, 3, "    return n\n```\n");
  assert.equal(q.kind, "selection");
  assert.equal(q.label, "fib.py, lines 2–3");
  assert.equal(q.text, "In “fib.py” (doc_1a2b3c4d5e6f7a8b, version 3), lines 2–3:\n````python\n    return n\n```\n\n````");
  assert.equal(selectionQuote({ ...doc, language: "text" }, 4, 4, "x").text,
    "In “fib.py” (doc_1a2b3c4d5e6f7a8b, version 3), line 4:\n```\nx\n```");
});

test("a very long selection is cut, saying how much was left out", () => {
  const q = selectionQuote(doc, 1, 9, "y".repeat(QUOTE_MAX + 5));
  assert.ok(q.text.endsWith("```\n(5 more characters of the selection left out)"));
});

test("a preview's error is quoted as data, with its place when it has one", () => {
  const q = errorQuote({ ...doc, title: "page.html" }, { message: "Uncaught ReferenceError: x is not defined", line: 12, column: 5 });
  assert.equal(q.label, "Error in page.html");
  assert.equal(q.text, "The preview of “page.html” (doc_1a2b3c4d5e6f7a8b, version 3) reported this error (line 12, column 5); "
    + "please fix it:\n```text\nUncaught ReferenceError: x is not defined\n```");
  assert.ok(!errorQuote(doc, { message: "m", line: null, column: null }).text.includes("(line"));
});

test("the message is the quotes, then what was typed", () => {
  assert.equal(composeMessage([{ text: "Q1" }, { text: "Q2" }], "Why?"), "Q1\n\nQ2\n\nWhy?");
  assert.equal(composeMessage([{ text: "Q1" }], "  "), "Q1");
  assert.equal(composeMessage([], "Hi"), "Hi");
});

test("a file name is the title made safe, with the document's extension once", () => {
  assert.equal(fileName("fib.py", ".py"), "fib.py");
  assert.equal(fileName("Rates report", ".md"), "Rates report.md");
  assert.equal(fileName("a/b\\c:d*?\"<>|e", ".txt"), "a b c d e.txt");
  assert.equal(fileName("..hidden", ".sh"), "hidden.sh");
  assert.equal(fileName("   ", ".json"), "document.json");
  assert.equal(fileName("x", "bad ext"), "x.txt");
  assert.equal(fileName("PAGE.HTML", ".html"), "PAGE.HTML");
});

test("the little words", () => {
  assert.equal(documentsLabel(1), "1 document");
  assert.equal(documentsLabel(1200), "1,200 documents");
  assert.ok(previewable("HTML") && previewable("svg") && previewable("mermaid") && previewable("markdown"));
  assert.ok(!previewable("python") && !previewable(null));
});

test("only a numi-preview-error of the right shape is taken from a preview frame", () => {
  assert.deepEqual(previewError({ type: "numi-preview-error", message: "boom", line: 3, column: 7 }),
    { message: "boom", line: 3, column: 7 });
  assert.deepEqual(previewError({ type: "numi-preview-error", message: "m".repeat(3000), line: "3", column: -1 }),
    { message: "m".repeat(2000), line: null, column: null });
  for (const bad of [null, "text", { type: "other", message: "x" }, { type: "numi-preview-error", message: 5 }]) {
    assert.equal(previewError(bad), null);
  }
});
