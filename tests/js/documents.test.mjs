// The documents' fold (web/js/documents.js): streams open, grow, end with their version or fail;
// a snapshot restores them; replays add nothing; the panel's tabs merge the list and the events.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { documentTabs, findDocument } from "../../web/js/documents.js";
import { deepFreeze } from "./freeze.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = (name) => JSON.parse(readFileSync(join(here, "..", "fixtures", "events", name), "utf8"));

const E = "e1";
let id = 0;
const ev = (type, fields = {}) => ({ type, event_id: ++id, turn_id: "t_1", epoch: E, ...fields });
const open = (docId, call, extra = {}) => ev("doc_open", { doc_id: docId, title: "Notes", language: "markdown", call_id: call, ...extra });
const delta = (docId, call, text) => ev("doc_delta", { doc_id: docId, delta: text, call_id: call });
const update = (docId, version, call, author = "model") =>
  ev("doc_update", { doc_id: docId, version, author, ...(call ? { call_id: call } : {}) });
const toolEnd = (call, ok) => ev("tool_end", { call_id: call, name: "doc_edit", ok, output: "x", duration_ms: 1 });

function fold(events, state = initialState("c")) {
  for (const e of events) state = applyEvent(deepFreeze(state), deepFreeze(e));
  return state;
}

describe("a stream", () => {
  test("opens, grows by its deltas and ends with its version", () => {
    let s = fold([ev("turn_start", { user_message_id: 1, continue_message_id: null }), open("d1", "c1"),
                  delta("d1", "c1", "# A\n"), delta("d1", "c1", "text\n")]);
    assert.deepEqual(findDocument(s, "d1"), { id: "d1", title: "Notes", language: "markdown", version: null, author: null,
      text: "# A\ntext\n", textVersion: null, callId: "c1", turnId: "t_1", before: null, openedBy: "c1" });
    s = fold([update("d1", 1, "c1")], s);
    const d = findDocument(s, "d1");
    assert.equal(d.callId, null);
    assert.equal(d.text, "# A\ntext\n");
    assert.equal(d.version, 1);
    assert.equal(d.textVersion, 1);
    assert.equal(d.author, "model");
  });

  test("a replayed delta adds nothing, and the state stays the same object", () => {
    const o = open("d1", "c1");
    const d = delta("d1", "c1", "one");
    const s = fold([o, d]);
    assert.equal(applyEvent(s, d), s);
    assert.equal(findDocument(s, "d1").text, "one");
  });

  test("a delta of a call this window did not see open, or of another call, adds nothing", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "a")]);
    const after = fold([delta("d1", "c9", "zzz"), delta("d2", "c1", "zzz")], s);
    assert.equal(findDocument(after, "d1").text, "a");
    assert.equal(findDocument(after, "d2"), undefined);
  });

  test("a failed create (tool_end ok false) leaves the slice; a failed edit puts the text back", () => {
    let s = fold([open("d1", "c1"), delta("d1", "c1", "draft"), toolEnd("c1", false)]);
    assert.deepEqual(s.documents, []);
    s = fold([open("d2", "c2"), delta("d2", "c2", "v1 text"), update("d2", 1, "c2"), toolEnd("c2", true),
              open("d2", "c3"), delta("d2", "c3", "half of v2")]);
    assert.equal(findDocument(s, "d2").text, "half of v2");
    s = fold([toolEnd("c3", false)], s);
    assert.deepEqual(findDocument(s, "d2"), { id: "d2", title: "Notes", language: "markdown", version: 1, author: "model",
      text: "v1 text", textVersion: 1, callId: null, turnId: null, before: null, openedBy: "c3" });
  });

  test("a tool_end that succeeded, or of another call, keeps the stream", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "x")]);
    assert.equal(fold([toolEnd("c1", true)], s).documents, s.documents);
    assert.equal(fold([toolEnd("c2", false)], s).documents, s.documents);
  });

  test("its turn ending without a doc_update drops it; another turn's end does not", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "x")]);
    assert.equal(fold([ev("turn_end", { turn_id: "t_other", status: "completed" })], s).documents.length, 1);
    assert.deepEqual(fold([ev("turn_end", { status: "cancelled" })], s).documents, []);
  });

  test("a server restart drops what was streaming", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "x"), update("d9", 3, null, "person")]);
    const restarted = applyEvent(s, { type: "queue", event_id: 1, turn_id: null, epoch: "e2", items: [] });
    assert.deepEqual(restarted.documents.map((d) => d.id), ["d9"]);
  });

  test("a person's version keeps the text this window holds, marked with its own version", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "abc"), update("d1", 1, "c1"),
                    ev("doc_update", { turn_id: null, doc_id: "d1", version: 2, author: "person" })]);
    const d = findDocument(s, "d1");
    assert.deepEqual([d.version, d.author, d.text, d.textVersion], [2, "person", "abc", 1]);
  });

  test("a doc_update for a document never seen open says only its version (the panel reads it)", () => {
    const s = fold([update("d5", 4, null, "person")]);
    assert.deepEqual(findDocument(s, "d5"), { id: "d5", title: null, language: null, version: 4, author: "person",
      text: null, textVersion: null, callId: null, turnId: null, before: null, openedBy: null });
    assert.equal(fold([update("d5", 3, null, "person")], s).documents[0].version, 4, "an older version changes nothing");
  });
});

describe("a snapshot", () => {
  test("restores the streams it lists with their text so far; later deltas go on from there", () => {
    const fx = fixture("28_document_snapshot_failed_edit.json");
    const upto = fx.events.findIndex((e) => e.type === "tool_end");
    const s = fold(fx.events.slice(0, upto));
    const d = findDocument(s, "doc_9e8d7c6b5a4f3e2d");
    assert.equal(d.text, "# Notes\n- one\n- two\n");
    assert.equal(d.callId, "call_e");
    assert.equal(fold(fx.events.slice(upto)).documents.length, 0);
  });

  test("drops the streams it no longer lists, and keeps one it lists unchanged as it is", () => {
    const s = fold([open("d1", "c1"), delta("d1", "c1", "abc")]);
    const snap = (documents) => ({ type: "snapshot", event_id: id + 1, turn_id: "t_1", epoch: E, message_id: null, content: "",
      reasoning: "", tool_calls: [], status: "streaming", last_event_id: id + 1, documents });
    const same = applyEvent(s, snap([{ doc_id: "d1", title: "Notes", language: "markdown", call_id: "c1", content: "abc" }]));
    assert.equal(same.documents, s.documents);
    assert.deepEqual(applyEvent(s, snap([])).documents, []);
    const none = { ...snap([]), turn_id: null, status: "complete" };
    delete none.documents;
    assert.deepEqual(applyEvent(s, none).documents, []);
  });
});

describe("documentTabs", () => {
  test("the listed documents first, then those only heard of; a stream's title wins", () => {
    const listed = [{ id: "d1", title: "Old title", language: "text", extension: ".txt" }];
    const s = fold([open("d1", "c1", { title: "New title", language: "python" }), open("d2", "c2", { title: "Fresh" }),
                    update("d3", 2, null, "person")]);
    const tabs = documentTabs(listed, s.documents);
    assert.deepEqual(tabs.map((t) => [t.id, t.title, t.language, t.streaming]),
      [["d1", "New title", "python", true], ["d2", "Fresh", "markdown", true]]);
    assert.equal(tabs[0].extension, ".txt");
    assert.deepEqual(documentTabs([], []), []);
  });
});
