// Long conversations in the reducer (web/js/reducer.js, CONTRACT §6): `compacted`,
// `context_trimmed`, the checkpoint a /context read names (loadCompaction), and where the
// thread draws their marks (web/js/context-marks.js).
// Run: node --test tests/js/*.test.mjs
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { contextMarks, loadCompaction } from "../../web/js/context-marks.js";
import { deepFreeze } from "./freeze.mjs";

const E = "e1";
let nextId = 0;
const ev = (type, fields = {}) => ({ type, event_id: ++nextId, turn_id: "t_2", epoch: E, ...fields });

function fold(state, events) {
  for (const e of events) state = applyEvent(deepFreeze(state), deepFreeze(e));
  return state;
}

const row = (id, role, fields = {}) => ({
  id, chat_id: "c", role, content: `m${id}`, reasoning: "", tool_calls: [], tool_call_id: null, status: "complete",
  model_id: null, usage: null, error: null, attachments: [], request_id: null, parent_id: id > 1 ? id - 1 : null,
  versions: { index: 1, count: 1, ids: [id] }, ...fields,
});

/** 1 user, 2 assistant, 3 user, 4 assistant: two turns, loaded, the first event seen. */
function chat() {
  nextId = 0;
  const s = loadHistory(initialState("c"), [row(1, "user"), row(2, "assistant"), row(3, "user"), row(4, "assistant")], false);
  return deepFreeze(applyEvent(s, { type: "title_update", event_id: ++nextId, turn_id: null, epoch: E, title: "T" }));
}

const drawnAll = () => true;
const marks = (s, drawn = drawnAll) => contextMarks(s.messages, drawn, s);

describe("compacted", () => {
  test("the checkpoint's boundary is known at once; its summary comes with the next /context read", () => {
    const s = fold(chat(), [
      ev("accepted", { request_id: "r1", message_id: 5, queued: false }),
      ev("turn_start", { user_message_id: 5, continue_message_id: null }),
      ev("compacted", { boundary_message_id: 2, tokens_before: 9000, tokens_after: 1200 }),
    ]);
    assert.deepEqual(s.compaction, { boundaryMessageId: 2, summary: null, tokensBefore: 9000, tokensAfter: 1200,
                                     createdAt: null });
    assert.deepEqual(marks(s), [{ afterId: 2, kind: "summary" }]);
    const read = loadCompaction(s, { boundary_message_id: 2, summary: "They talked about cats.", tokens_before: 9000,
                                     tokens_after: 1200, created_at: "2026-12-01T10:00:00Z" });
    assert.equal(read.compaction.summary, "They talked about cats.");
    // The same event again (a replay after a reload) changes nothing, and keeps the summary.
    const again = applyEvent(deepFreeze(read), { ...ev("compacted", { boundary_message_id: 2, tokens_before: 9000,
                                                                      tokens_after: 1200 }) });
    assert.equal(again.compaction, read.compaction);
    // A newer checkpoint further on: a new boundary, its summary not read yet.
    const newer = applyEvent(deepFreeze(read), ev("compacted", { boundary_message_id: 4, tokens_before: 5000, tokens_after: 900 }));
    assert.equal(newer.compaction.boundaryMessageId, 4);
    assert.equal(newer.compaction.summary, null);
  });

  test("a /context read without a checkpoint (a branch made before it) takes the divider away", () => {
    const s = loadCompaction(chat(), { boundary_message_id: 2, summary: "S", tokens_before: 1, tokens_after: 1, created_at: "x" });
    assert.equal(loadCompaction(deepFreeze(s), { boundary_message_id: 2, summary: "S", tokens_before: 1, tokens_after: 1,
                                                 created_at: "x" }), s, "the same checkpoint is the same state");
    const none = loadCompaction(deepFreeze(s), null);
    assert.equal(none.compaction, null);
    assert.deepEqual(marks(none), []);
    assert.equal(loadCompaction(none, undefined), none);
  });

  test("the divider is drawn only where the boundary is loaded, after the nearest bubble", () => {
    const s = loadCompaction(chat(), { boundary_message_id: 99, summary: "S" });
    assert.deepEqual(marks(s), [], "a boundary above the loaded page is not guessed at");
    // A boundary that is a tool result (drawn inside its call) marks the reply that made the call.
    const t = loadCompaction(chat(), { boundary_message_id: 3, summary: "S" });
    assert.deepEqual(marks(t, (m) => m.id !== 3), [{ afterId: 2, kind: "summary" }]);
  });
});

describe("context_trimmed", () => {
  test("the turn says how many messages were left out, between its message and its reply", () => {
    const s = fold(chat(), [
      ev("accepted", { request_id: "r1", message_id: 5, queued: false }),
      ev("turn_start", { user_message_id: 5, continue_message_id: null }),
      ev("context_trimmed", { messages_omitted: 2, tokens_before: 5000, tokens_after: 3000 }),
      ev("content", { message_id: 6, delta: "Hi" }),
    ]);
    assert.deepEqual(s.trimmed, { turnId: "t_2", userMessageId: 5, messagesOmitted: 2, tokensBefore: 5000,
                                  tokensAfter: 3000, notice: null });
    assert.deepEqual(s.messages.map((m) => m.id), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(marks(s), [{ afterId: 5, kind: "trimmed" }]);
    // It stays with that turn after it ends, and the next turn starts without it.
    const ended = fold(s, [ev("done", { message_id: 6 }), ev("turn_end", { status: "completed" })]);
    assert.deepEqual(marks(ended), [{ afterId: 5, kind: "trimmed" }]);
    const next = applyEvent(ended, { ...ev("turn_start", { user_message_id: 7, continue_message_id: null }), turn_id: "t_3" });
    assert.equal(next.trimmed, null);
  });

  test("a notice comes with it (why the summary failed); a later request of the turn says the newer count", () => {
    const s = fold(chat(), [
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("context_trimmed", { messages_omitted: 1, tokens_before: 10, tokens_after: 5, notice: "The summary failed." }),
      ev("context_trimmed", { messages_omitted: 2, tokens_before: 12, tokens_after: 6 }),
    ]);
    assert.equal(s.trimmed.messagesOmitted, 2);
    assert.equal(s.trimmed.notice, null);
    assert.equal(fold(chat(), [ev("turn_start", { user_message_id: 3, continue_message_id: null }),
                                ev("context_trimmed", { messages_omitted: 1, tokens_before: 1, tokens_after: 1,
                                                        notice: "The summary failed." })]).trimmed.notice,
                 "The summary failed.");
  });

  test("a turn with no user message of its own (regenerate, continue): before its reply", () => {
    const s = fold(chat(), [
      ev("turn_start", { user_message_id: null, continue_message_id: 4 }),
      ev("context_trimmed", { messages_omitted: 1, tokens_before: 10, tokens_after: 5 }),
      ev("content", { message_id: 4, delta: "again" }),
    ]);
    assert.deepEqual(marks(s), [{ afterId: 3, kind: "trimmed" }]);
    // Before any reply of the turn is shown: after the last message sent.
    const early = fold(chat(), [
      ev("turn_start", { user_message_id: null, continue_message_id: null }),
      ev("context_trimmed", { messages_omitted: 1, tokens_before: 10, tokens_after: 5 }),
    ]);
    assert.deepEqual(marks(early), [{ afterId: 4, kind: "trimmed" }]);
  });

  test("the divider and the note after one message: the divider first", () => {
    const s = fold(loadCompaction(chat(), { boundary_message_id: 3, summary: "S" }), [
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("context_trimmed", { messages_omitted: 1, tokens_before: 10, tokens_after: 5 }),
    ]);
    assert.deepEqual(marks(s), [{ afterId: 3, kind: "summary" }, { afterId: 3, kind: "trimmed" }]);
  });
});

test("the server's own sequence (fixture 17): summarized, still two left out, then the answer", () => {
  const fx = JSON.parse(readFileSync(new URL("../fixtures/events/17_compacted_then_trimmed.json", import.meta.url), "utf8"));
  let s = initialState(fx.chat_id);
  for (const p of fx.pending) s = { ...s, pending: [...s.pending, p] };
  s = fold(s, fx.events);
  assert.deepEqual(s.compaction, { boundaryMessageId: 36, summary: null, tokensBefore: 118000, tokensAfter: 21500,
                                   createdAt: null });
  assert.deepEqual(s.trimmed, { turnId: "t_7c1d2e3f4a5b", userMessageId: 41, messagesOmitted: 2, tokensBefore: 21500,
                                tokensAfter: 19800, notice: null });
  // Message 36 is not loaded here: no divider is guessed at; the note sits in the turn.
  assert.deepEqual(marks(s), [{ afterId: 41, kind: "trimmed" }]);
});
