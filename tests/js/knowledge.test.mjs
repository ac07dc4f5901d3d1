// Knowledge sources as the page shows them (web/js/knowledge.js): locators in words, which chunks a
// locator names, a document's text put back together from overlapping chunks (by place, and by
// lines), where a snippet lies, a base's state in words and the paths typed in Settings; and the
// knowledge sources of a reply (web/js/citations.js) named by title and place, never as links.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import {
  atLocator, baseStatus, busy, byLines, embeddingsStatus, byPages, documentBlocks, documentLines, isKnowledge, locatorKind, locatorLabel,
  matchingChunks, newPart, parsePaths, snippetRanges, sourcePlace,
} from "../../web/js/knowledge.js";
import { markerLabel, shownSources, withCitedSources } from "../../web/js/citations.js";
import { deepFreeze } from "./freeze.mjs";

describe("locatorLabel", () => {
  test("a PDF page by its printed label, else its number from 1", () => {
    assert.equal(locatorLabel({ page: "iv", page_index: 3 }), "p. iv");
    assert.equal(locatorLabel({ page: "", page_index: 3 }), "p. 4");
    assert.equal(locatorLabel({ page_index: 0 }), "p. 1");
  });

  test("a heading path as it is; the text before the first heading is the beginning", () => {
    assert.equal(locatorLabel({ heading: "Tomatoes > Soup" }), "Tomatoes > Soup");
    assert.equal(locatorLabel({ heading: "" }), "Beginning");
  });

  test("lines as a range, one line as one", () => {
    assert.equal(locatorLabel({ lines: [3, 10] }), "lines 3–10");
    assert.equal(locatorLabel({ lines: [7, 7] }), "line 7");
  });

  test("anything else is no place", () => {
    for (const bad of [null, undefined, {}, "p. 1", { lines: [0, 2] }, { lines: [5, 2] }, { lines: ["1", "2"] },
      { page_index: "3" }, { lines: [1] }]) {
      assert.equal(locatorLabel(bad), "", JSON.stringify(bad));
      assert.equal(locatorKind(bad), null, JSON.stringify(bad));
    }
  });

  test("a source is named by its title and place", () => {
    assert.equal(sourcePlace("manual.pdf", { page: "iv", page_index: 3 }), "manual.pdf · p. iv");
    assert.equal(sourcePlace("notes.txt", null), "notes.txt");
  });
});

const CHUNKS = deepFreeze([
  { locator: { page: "i", page_index: 0 }, text: "one" },
  { locator: { page: "1", page_index: 2 }, text: "two" },
  { locator: { page: "1", page_index: 2 }, text: "three" },
  { locator: { page: "2", page_index: 3 }, text: "four" },
]);

describe("matchingChunks", () => {
  test("a page: every chunk of that page index (the label may repeat in another numbering)", () => {
    assert.deepEqual(matchingChunks(CHUNKS, { page: "1", page_index: 2 }), [1, 2]);
    assert.deepEqual(matchingChunks(CHUNKS, { page: "i", page_index: 0 }), [0]);
    assert.deepEqual(matchingChunks(CHUNKS, { page: "9", page_index: 9 }), []);
    // Without an index, by the label.
    assert.deepEqual(matchingChunks(CHUNKS, { page: "2" }), [3]);
  });

  test("a heading: exactly that heading path, not its parent or a sibling", () => {
    const chunks = [{ locator: { heading: "A" } }, { locator: { heading: "A > B" } }, { locator: { heading: "A > B" } },
      { locator: { heading: "A > C" } }];
    assert.deepEqual(matchingChunks(chunks, { heading: "A > B" }), [1, 2]);
    assert.deepEqual(matchingChunks(chunks, { heading: "A" }), [0]);
  });

  test("lines: every chunk overlapping the range", () => {
    const chunks = [{ locator: { lines: [1, 40] } }, { locator: { lines: [35, 80] } }, { locator: { lines: [75, 90] } }];
    assert.deepEqual(matchingChunks(chunks, { lines: [36, 39] }), [0, 1]);
    assert.deepEqual(matchingChunks(chunks, { lines: [81, 81] }), [2]);
    assert.deepEqual(matchingChunks(chunks, { lines: [91, 95] }), []);
  });

  test("a locator of another kind matches nothing", () => {
    assert.equal(atLocator({ heading: "A" }, { lines: [1, 2] }), false);
    assert.equal(atLocator({ lines: [1, 2] }, { page_index: 0 }), false);
    assert.deepEqual(matchingChunks(null, { heading: "A" }), []);
  });
});

// A text cut as the indexer cuts it: chunks overlapping by ~10 %, the next one starting at a sentence.
const SENTENCES = Array.from({ length: 60 }, (_, i) => `Sentence ${i} says something about moths and lamps.`);
const TEXT = SENTENCES.join(" ");
function overlapping(text, size, overlap) {
  const out = [];
  for (let start = 0; ; ) {
    const end = Math.min(text.length, start + size);
    out.push(text.slice(start, end));
    if (end === text.length) return out;
    start = text.indexOf("Sentence", end - overlap);
  }
}

describe("a document's text from its chunks", () => {
  test("the overlap of consecutive chunks is shown once", () => {
    assert.equal(newPart("Moths fly. Lamps glow all night long.", "Lamps glow all night long. Traps wait."), " Traps wait.");
    assert.equal(newPart("abc", "xyz"), "xyz");
    // A few letters in common are chance, not an overlap.
    assert.equal(newPart("the moths", "moths and lamps at night"), "moths and lamps at night");
    assert.equal(newPart("", "xyz"), "xyz");
    const parts = overlapping(TEXT, 700, 120);
    assert.ok(parts.length > 3);
    let joined = parts[0];
    for (let i = 1; i < parts.length; i += 1) joined += newPart(parts[i - 1], parts[i]);
    assert.equal(joined, TEXT);
  });

  test("one block per page or heading, in order, with the chunks it holds", () => {
    const parts = overlapping(TEXT, 700, 120);
    const chunks = deepFreeze([{ locator: { heading: "" }, text: "Intro." },
      ...parts.map((text) => ({ locator: { heading: "Moths" }, text })), { locator: { heading: "Lamps" }, text: "Bright." }]);
    const blocks = documentBlocks(chunks);
    assert.deepEqual(blocks.map((b) => b.locator.heading), ["", "Moths", "Lamps"]);
    assert.equal(blocks[1].text, TEXT);
    assert.deepEqual(blocks[1].chunks, parts.map((_, i) => i + 1));
    assert.deepEqual(documentBlocks(CHUNKS).map((b) => [b.text, b.chunks]), [["one", [0]], ["two\n\nthree", [1, 2]], ["four", [3]]]);
  });

  test("text and code come back line by line, overlaps and mid-line starts included", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"x".repeat(i % 7)}`);
    const text = lines.join("\n");
    const chunks = deepFreeze([
      { locator: { lines: [1, 12] }, text: lines.slice(0, 12).join("\n") },
      // Starts mid-line 10 (a cut at a space), as a prose chunk may.
      { locator: { lines: [10, 25] }, text: lines.slice(9, 25).join("\n").slice(4) },
      { locator: { lines: [24, 30] }, text: lines.slice(23).join("\n") },
    ]);
    const got = documentLines(chunks);
    assert.equal(got.map((l) => l.text).join("\n"), text);
    assert.deepEqual(got.slice(0, 2).map((l) => l.n), [1, 2]);
    assert.ok(byLines(chunks) && !byPages(chunks));
    assert.ok(byPages(CHUNKS) && !byLines(CHUNKS));
    assert.ok(!byLines([]) && !byPages([]));
  });

  test("a snippet is found by its pieces between the …", () => {
    const text = "The moth lamp trap counts species in the meadow every night of the season.";
    assert.deepEqual(snippetRanges(text, "…lamp trap counts species…every night of the season."),
      [[text.indexOf("every night"), text.length], [text.indexOf("lamp trap"), text.indexOf(" in the")]]);
    assert.deepEqual(snippetRanges(text, "nothing of this is there"), []);
    assert.deepEqual(snippetRanges(text, "…moth…"), []); // too short to mean anything
  });
});

describe("bases", () => {
  test("a base's state in words", () => {
    assert.equal(baseStatus({ status: "ready", documents: 1, chunks: 1200 }), "Ready · 1 document · 1,200 chunks");
    assert.equal(baseStatus({ status: "indexing", documents: 2, chunks: 9, progress: { done: 2, total: 5, current: "/n/a.pdf" } }),
      "Reading 2 of 5: /n/a.pdf · 2 documents · 9 chunks");
    assert.equal(baseStatus({ status: "indexing", documents: 0, chunks: 0 }), "Looking over its files… · 0 documents · 0 chunks");
  });

  test("its embeddings in words, and whether the list is read again soon", () => {
    const on = (e) => ({ status: "ready", chunks: 40, embeddings: { provider_id: "p", model: "nomic-embed-text", ...e } });
    assert.equal(embeddingsStatus({ status: "ready", embeddings: null }), "");
    assert.equal(embeddingsStatus(on({ status: "ready", embedded: 40 })), "Searched by words and by meaning (nomic-embed-text).");
    assert.equal(embeddingsStatus(on({ status: "embedding", embedded: 12 })),
      "Embedding with nomic-embed-text: 12 of 40 chunks. Searching by words until done.");
    assert.equal(embeddingsStatus(on({ status: "error", error: "The server answered 404." })),
      "Search by meaning (nomic-embed-text) is paused: The server answered 404. Searching by words meanwhile.");
    assert.ok(busy([{ status: "ready" }, { status: "indexing" }]));
    assert.ok(busy([on({ status: "embedding" })]));
    assert.ok(!busy([on({ status: "error" }), { status: "ready" }]) && !busy(null));
  });

  test("paths one per line: blanks and repeats dropped, relative ones refused", () => {
    assert.deepEqual(parsePaths(" /a/b \n\n/c\n/a/b\nC:\\Notes\n\\\\srv\\share\n"),
      { paths: ["/a/b", "/c", "C:\\Notes", "\\\\srv\\share"], error: "" });
    const { error } = parsePaths("/a\nnotes/x");
    assert.match(error, /“notes\/x” is not a full path/);
    assert.deepEqual(parsePaths("").paths, []);
  });
});

describe("knowledge sources of a reply", () => {
  const items = deepFreeze([
    { n: 1, kind: "knowledge", title: "manual.pdf", snippet: "moths", locator: { page: "iv", page_index: 3 },
      knowledge_id: "kb_1", document_id: 7, path: "/docs/manual.pdf", url: "javascript:alert(1)" },
    { n: 2, title: "Paris", url: "https://example.org/paris", snippet: "" },
    { n: 3, kind: "knowledge", title: "", snippet: "", locator: { lines: [3, 9] }, knowledge_id: "kb_1", document_id: 8,
      file_id: "file_9" },
  ]);

  test("named by title and place, opening in the viewer rather than as a link", () => {
    const [a, b, c] = shownSources(items);
    assert.equal(a.url, null);
    assert.equal(a.place, "p. iv");
    assert.deepEqual(a.knowledge, { knowledge_id: "kb_1", document_id: 7, locator: { page: "iv", page_index: 3 },
      path: "/docs/manual.pdf", file_id: null });
    assert.equal(markerLabel(a), "Source 1: manual.pdf · p. iv");
    assert.equal(b.knowledge, undefined);
    assert.equal(c.title, "Source 3");
    assert.equal(c.knowledge.file_id, "file_9");
    assert.ok(isKnowledge(items[0]) && !isKnowledge(items[1]));
    assert.ok(!isKnowledge({ kind: "knowledge", knowledge_id: "kb", document_id: "7" }));
  });

  test("copied with their place and path", () => {
    assert.equal(withCitedSources("Moths [1] and [3].", items),
      "Moths [1] and [3].\n\nSources:\n[1] manual.pdf · p. iv — /docs/manual.pdf\n[3] Source 3 · lines 3–9\n");
  });
});
