// A compare's columns in the fold (web/js/compare.js, CONTRACT §10): what the shared fixture
// (tests/fixtures/events/30_compare.json) does not already hold. Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadedCompare, columnFigures, activeColumn, repliesInColumns } from "../../web/js/compare.js";
import { loadHistory } from "../../web/js/history-page.js";
import { deepFreeze } from "./freeze.mjs";

const EPOCH = "e1";
let id = 0;
const ev = (type, fields = {}) => ({ type, event_id: ++id, turn_id: "t_1", epoch: EPOCH, ...fields });

function started() {
  id = 0;
  let s = initialState("c_1");
  s = applyEvent(s, { ...ev("accepted", { request_id: "r", message_id: 1, queued: false, attachments: [] }), turn_id: null });
  return applyEvent(s, ev("turn_start", { user_message_id: 1, continue_message_id: null,
    compare: [{ model_id: "m_a", message_id: 2 }, { model_id: "m_b", message_id: 3 }] }));
}

test("a column's events never touch the branch's messages, and Stop ends every column", () => {
  let s = started();
  const branch = s.messages;
  s = applyEvent(deepFreeze(s), deepFreeze(ev("content", { delta: "hi", message_id: 2, model_id: "m_a" })));
  s = applyEvent(s, ev("tool_start", { call_id: "c1", name: "upper", arguments: "{}", message_id: 3, model_id: "m_b" }));
  assert.equal(s.messages.length, branch.length);
  assert.equal(s.notice, null);
  s = applyEvent(s, ev("error", { code: "cancelled", message: "Stopped.", retryable: false, message_id: 3, model_id: "m_b" }));
  s = applyEvent(s, ev("turn_end", { status: "cancelled" }));
  const cols = s.compares[1].columns;
  assert.deepEqual(cols.map((c) => c.status), ["cancelled", "cancelled"]);
  assert.equal(cols[0].steps[0].content, "hi");
  assert.equal(cols[1].error, null); // a stop is no error
  assert.deepEqual(cols[1].steps[0].toolCalls.map((c) => [c.name, c.state]), [["upper", "running"]]);
  assert.equal(s.compares[1].running, false);
});

test("a reply's next step after a tool call is a new step of the same column", () => {
  let s = started();
  s = applyEvent(s, ev("tool_start", { call_id: "c1", name: "upper", arguments: "{}", message_id: 2, model_id: "m_a" }));
  s = applyEvent(s, ev("tool_end", { call_id: "c1", name: "upper", ok: true, output: "X", duration_ms: 1, model_id: "m_a",
                                     message_id: 2 }));
  s = applyEvent(s, ev("content", { delta: "after", message_id: 5, model_id: "m_a" }));
  const col = s.compares[1].columns[0];
  assert.deepEqual(col.steps.map((st) => [st.id, st.content]), [[2, ""], [5, "after"]]);
  assert.deepEqual(col.steps[0].toolCalls.map((c) => [c.state, c.ok]), [["done", true]]);
});

test("a snapshot per column stands in for the events a late window missed", () => {
  id = 0;
  let s = initialState("c_1");
  s = loadedCompare(s, 1, { columns: [
    { model_id: "m_a", message_id: 2, messages: [{ id: 2, role: "assistant", content: "old", status: "streaming" }] },
    { model_id: "m_b", message_id: 3, messages: [{ id: 3, role: "assistant", content: "", status: "streaming" }] }] });
  s = { ...s, compares: { 1: { ...s.compares[1], running: true } } };
  s = applyEvent(s, ev("snapshot", { message_id: 2, content: "newer text", reasoning: "", tool_calls: [], status: "streaming",
                                     last_event_id: 40, model_id: "m_a" }));
  s = applyEvent(s, ev("snapshot", { message_id: 3, content: "b's", reasoning: "", tool_calls: [], status: "complete",
                                     last_event_id: 40, model_id: "m_b" }));
  assert.equal(s.lastEventId, 40);
  assert.equal(s.turn.status, "running");
  assert.deepEqual(s.compares[1].columns.map((c) => [c.steps[0].content, c.status]),
    [["newer text", "streaming"], ["b's", "complete"]]);
  // Live deltas go on from the snapshot.
  s = applyEvent(s, { ...ev("content", { delta: "!", message_id: 2, model_id: "m_a" }), event_id: 41 });
  assert.equal(s.compares[1].columns[0].steps[0].content, "newer text!");
});

test("the saved compare gives a reload its columns, their figures and errors", () => {
  const body = { columns: [
    { model_id: "m_a", message_id: 2, messages: [
      { id: 2, role: "assistant", content: "", status: "complete", tool_calls: [{ id: "c1", name: "upper", arguments: "{}" }],
        usage: { output_tokens: 3, ttft_ms: 250, tokens_per_s: 10, cost: 0.001 } },
      { id: 4, role: "tool", tool_call_id: "c1", content: "X", tool_error: false, status: "complete" },
      { id: 5, role: "assistant", content: "done", status: "complete",
        usage: { output_tokens: 7, ttft_ms: 90, tokens_per_s: 42.5, cost: 0.002 } }] },
    { model_id: "m_b", message_id: 3, messages: [
      { id: 3, role: "assistant", content: "", status: "error", error: { code: "auth", message: "Bad key." } }] }] };
  const s = loadedCompare(deepFreeze(initialState("c_1")), 1, deepFreeze(body));
  const [a, b] = s.compares[1].columns;
  assert.deepEqual(a.steps.map((st) => st.id), [2, 5]);
  assert.deepEqual(a.steps[0].toolCalls, [{ id: "c1", name: "upper", state: "done", ok: true }]);
  assert.equal(a.status, "complete");
  const fig = columnFigures(a);
  assert.equal(fig.ttftMs, 250); // the reply's first token came in its first step
  assert.equal(fig.tokensPerS, 42.5);
  assert.equal(fig.tokens, 10);
  assert.ok(Math.abs(fig.cost - 0.003) < 1e-9);
  assert.deepEqual([b.status, b.error.message], ["error", "Bad key."]);
  assert.equal(s.compares[1].running, false);
});

test("the column on the active branch is the chosen one, else the first", () => {
  const s = loadedCompare(initialState("c_1"), 1, { columns: [
    { model_id: "m_a", message_id: 2, messages: [{ id: 2, role: "assistant", content: "a", status: "complete" }] },
    { model_id: "m_b", message_id: 3, messages: [{ id: 3, role: "assistant", content: "b", status: "complete" },
      { id: 6, role: "assistant", content: "b2", status: "complete" }] }] });
  const entry = s.compares[1];
  assert.equal(activeColumn(entry, new Set([1])).modelId, "m_a");
  assert.equal(activeColumn(entry, new Set([1, 3, 6])).modelId, "m_b");
});

test("the thread leaves a compare's replies to its columns, and shows what follows", () => {
  let s = initialState("c_1");
  s = loadHistory(s, [
    { id: 1, role: "user", content: "q", status: "complete", compare: ["m_a", "m_b"] },
    { id: 2, role: "assistant", content: "a", status: "complete" },
    { id: 7, role: "user", content: "next", status: "complete" },
    { id: 8, role: "assistant", content: "answer", status: "complete" }], false);
  assert.deepEqual(s.messages[0].compare, ["m_a", "m_b"]);
  assert.deepEqual([...repliesInColumns(s.messages)], [2]);
});

test("turn_start of a compare replayed changes nothing", () => {
  const s = started();
  const again = applyEvent(s, { ...ev("turn_start", { user_message_id: 1, continue_message_id: null,
    compare: [{ model_id: "m_a", message_id: 2 }, { model_id: "m_b", message_id: 3 }] }), event_id: 99 });
  assert.equal(again.compares, s.compares);
});
