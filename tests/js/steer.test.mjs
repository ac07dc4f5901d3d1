// Steering and the agent-tools additions to the reducer (web/js/reducer.js): queue items
// with `steer`, the `steered` event (a queued message moved into the running turn), and
// `can_always` on approval_required. Event shapes as docs/PROTOCOL.md describes them and
// backend/turns/runner.py publishes them; a steering message keeps its id as it joins the
// turn (`steered.message_id` equals `queued_id`, /work/notes' tree design, CONTRACT §5).
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { localSend } from "../../web/js/turn-events.js";
import { deepFreeze } from "./freeze.mjs";

const E = "e1";
const T = "t_1";

let nextId = 0;
/** An event with the next event_id. */
const ev = (type, fields = {}) => ({ type, event_id: ++nextId, turn_id: T, epoch: E, ...fields });

/** Fold events over a state, freezing each state and event on the way (purity). */
function fold(state, events) {
  for (const e of events) state = applyEvent(deepFreeze(state), deepFreeze(e));
  return state;
}

const summary = (s) => s.messages.map((m) => [m.id, m.role, m.status, m.content]);

/**
 * The protocol test's story (tests/test_protocol_steering.py): "find it" starts a turn whose
 * first step writes "Looking" and calls `upper`; "answer in French" is sent with mode steer
 * meanwhile (queued as 3), and after the tool result (4) it joins the branch, keeping its id;
 * the next step (5) answers after it.
 */
function steeringStory({ queueFirst = true } = {}) {
  nextId = 0;
  let s = localSend(initialState("c"), "r1", "find it");
  s = fold(s, [
    ev("accepted", { turn_id: null, request_id: "r1", message_id: 1, queued: false }),
    ev("turn_start", { user_message_id: 1, continue_message_id: null }),
    ev("content", { delta: "Looking", message_id: 2 }),
  ]);
  s = localSend(s, "r2", "answer in French");
  s = fold(s, [
    ev("accepted", { request_id: "r2", message_id: 3, queued: true, steer: true }),
    ev("queue", { turn_id: null, items: [{ message_id: 3, preview: "answer in French", steer: true }] }),
  ]);
  const queued = s;
  s = fold(s, [
    ev("tool_preparing", { call_id: "c1", name: "upper", message_id: 2 }),
    ev("message_saved", { message_id: 2, role: "assistant" }),
    ev("tool_start", { call_id: "c1", name: "upper", arguments: '{"text": "abc"}', message_id: 2 }),
    ev("tool_end", { call_id: "c1", name: "upper", ok: true, output: "ABC", duration_ms: 3 }),
    ev("message_saved", { message_id: 4, role: "tool" }),
  ]);
  const take = ev("queue", { turn_id: null, items: [] });
  const steered = ev("steered", { message_id: 3, queued_id: 3, content: "answer in French" });
  s = fold(s, queueFirst ? [take, steered] : [steered, take]);
  const moved = s;
  s = fold(s, [
    ev("message_saved", { message_id: 3, role: "user" }),
    ev("content", { delta: "Done, in French.", message_id: 5 }),
    ev("message_saved", { message_id: 5, role: "assistant" }),
    ev("done", { message_id: 5 }),
    ev("turn_end", { status: "completed" }),
  ]);
  return { queued, moved, end: s };
}

describe("queue items with steer", () => {
  test("a steering send is queued and marked as such, in the queue and on its message", () => {
    const { queued } = steeringStory();
    assert.deepEqual(queued.queue, [{ message_id: 3, preview: "answer in French", steer: true }]);
    const m = queued.messages.find((x) => x.id === 3);
    assert.equal(m.status, "queued");
    assert.equal(m.steer, true);
    assert.equal(m.requestId, "r2");
    assert.deepEqual(queued.pending, []);
  });

  test("a plain queued item says steer: false, also when the server sends no flag", () => {
    nextId = 0;
    const s = fold(initialState("c"), [
      ev("queue", { turn_id: null, items: [{ message_id: 7, preview: "a", steer: false }, { message_id: 8, preview: "b" }] }),
    ]);
    assert.deepEqual(s.queue, [{ message_id: 7, preview: "a", steer: false }, { message_id: 8, preview: "b", steer: false }]);
  });

  test("a snapshot's queue keeps the flag", () => {
    nextId = 0;
    const s = fold(initialState("c"), [
      { type: "snapshot", event_id: 4, last_event_id: 4, epoch: E, turn_id: null, status: "complete",
        message_id: null, queue: [{ message_id: 9, preview: "steer me", steer: true }] },
    ]);
    assert.deepEqual(s.queue, [{ message_id: 9, preview: "steer me", steer: true }]);
  });

  test("a discarded steering message leaves the transcript (no steered follows)", () => {
    const { queued } = steeringStory();
    const s = applyEvent(queued, { type: "queue", event_id: 100, turn_id: null, epoch: E, items: [] });
    assert.equal(s.messages.some((m) => m.id === 3), false);
    assert.deepEqual(s.queue, []);
  });
});

describe("steered", () => {
  const expected = [
    [1, "user", "complete", "find it"],
    [2, "assistant", "complete", "Looking"],
    [3, "user", "complete", "answer in French"],
    [5, "assistant", "complete", "Done, in French."],
  ];

  test("the message lands after the step's tool call, and the next step after it", () => {
    const { moved, end } = steeringStory();
    assert.deepEqual(summary(moved), expected.slice(0, 3));
    assert.deepEqual(moved.queue, []);
    assert.deepEqual(summary(end), expected);
    const step1 = end.messages.find((m) => m.id === 2);
    assert.deepEqual(step1.toolCalls.map((c) => [c.id, c.state, c.output]), [["c1", "done", "ABC"]]);
    // The moved row keeps the send's request id (the same request_id on the server).
    assert.equal(end.messages.find((m) => m.id === 3).requestId, "r2");
    assert.deepEqual(end.turn.messageIds, [2, 5]);
    assert.equal(end.turn.status, "completed");
  });

  test("the same result when steered comes before the queue change", () => {
    const { moved, end } = steeringStory({ queueFirst: false });
    assert.deepEqual(summary(moved), expected.slice(0, 3));
    assert.deepEqual(summary(end), expected);
    assert.equal(end.messages.find((m) => m.id === 3).requestId, "r2");
  });

  test("the queued message's files come along", () => {
    nextId = 0;
    const file = { id: "file_1", name: "a.txt", mime: "text/plain", size: 3 };
    let s = fold(initialState("c"), [ev("turn_start", { user_message_id: null, continue_message_id: null })]);
    s = localSend(s, "r9", "look at this", [file]);
    s = fold(s, [
      ev("accepted", { request_id: "r9", message_id: 3, queued: true, steer: true }),
      ev("queue", { turn_id: null, items: [{ message_id: 3, preview: "look at this", steer: true }] }),
      ev("queue", { turn_id: null, items: [] }),
      ev("steered", { message_id: 3, queued_id: 3, content: "look at this" }),
    ]);
    assert.deepEqual(s.messages.map((m) => [m.id, m.status, m.attachments]), [[3, "complete", [file]]]);
  });

  test("from another window (the queued row never seen), the event's text is shown", () => {
    nextId = 0;
    const s = fold(initialState("c"), [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("content", { delta: "Working", message_id: 2 }),
      ev("steered", { message_id: 3, queued_id: 3, content: "typed elsewhere" }),
    ]);
    assert.deepEqual(summary(s).map(([id, role, , content]) => [id, role, content]),
      [[2, "assistant", "Working"], [3, "user", "typed elsewhere"]]);
  });

  test("a replayed steered changes nothing", () => {
    const { moved } = steeringStory();
    const again = applyEvent(moved, { type: "steered", event_id: moved.lastEventId, turn_id: T, epoch: E,
                                      message_id: 3, queued_id: 3, content: "answer in French" });
    assert.equal(again, moved);
  });

  test("a history page read before the move does not put the message back in the queue", () => {
    const { moved } = steeringStory();
    const row = (id, fields) => ({ id, chat_id: "c", reasoning: "", tool_calls: [], tool_call_id: null,
                                   model_id: null, usage: null, error: null, attachments: [], request_id: null,
                                   ...fields });
    const s = loadHistory(moved, [
      row(1, { role: "user", content: "find it", status: "complete", request_id: "r1", parent_id: null }),
      row(2, { role: "assistant", content: "Looking", status: "complete", parent_id: 1,
               tool_calls: [{ id: "c1", name: "upper", arguments: '{"text": "abc"}' }] }),
      row(4, { role: "tool", content: "ABC", status: "complete", tool_call_id: "c1", parent_id: 2 }),
      row(3, { role: "user", content: "answer in French", status: "queued", request_id: "r2", parent_id: null }),
    ], false);
    assert.deepEqual(s.messages.map((m) => [m.id, m.status]), [[1, "complete"], [2, "complete"], [4, "complete"],
                                                              [3, "complete"]]);
  });

  test("the turn re-sent after a reload never shows the message it names queued, history holding it moved", () => {
    nextId = 0;
    const row = (id, fields) => ({ id, chat_id: "c", reasoning: "", tool_calls: [], tool_call_id: null,
                                   model_id: null, usage: null, error: null, attachments: [], request_id: null,
                                   status: "complete", ...fields });
    // The branch in parent order: the steering message (3) follows the tool result (4).
    let s = loadHistory(initialState("c"), [
      row(1, { role: "user", content: "find it", request_id: "r1", parent_id: null }),
      row(2, { role: "assistant", content: "Looking", tool_calls: [{ id: "c1", name: "upper", arguments: "{}" }],
               parent_id: 1 }),
      row(4, { role: "tool", content: "ABC", tool_call_id: "c1", parent_id: 2 }),
      row(3, { role: "user", content: "answer in French", request_id: "r2", parent_id: 4 }),
      row(5, { role: "assistant", content: "Done, in French.", parent_id: 3 }),
    ], false);
    const replay = [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("content", { delta: "Looking", message_id: 2 }),
      ev("accepted", { request_id: "r2", message_id: 3, queued: true, steer: true }),
      ev("queue", { turn_id: null, items: [{ message_id: 3, preview: "answer in French", steer: true }] }),
      ev("tool_start", { call_id: "c1", name: "upper", arguments: "{}", message_id: 2 }),
      ev("tool_end", { call_id: "c1", name: "upper", ok: true, output: "ABC", duration_ms: 3 }),
      ev("queue", { turn_id: null, items: [] }),
      ev("steered", { message_id: 3, queued_id: 3, content: "answer in French" }),
      ev("content", { delta: "Done, in French.", message_id: 5 }),
      ev("done", { message_id: 5 }),
      ev("turn_end", { status: "completed" }),
    ];
    // Each state is what one frame may draw when the replay spans several.
    for (const e of replay) {
      s = fold(s, [e]);
      assert.deepEqual(s.messages.map((m) => m.id), [1, 2, 4, 3, 5], e.type);
      assert.equal(s.messages.find((m) => m.id === 3).status, "complete", e.type);
      assert.deepEqual(s.queue, [], e.type);
    }
    assert.deepEqual(summary(s).filter(([, role]) => role !== "tool"), expected);
  });

  test("a later page with the moved row merges with it, in parent order", () => {
    const { end } = steeringStory();
    const row = (id, fields) => ({ id, chat_id: "c", reasoning: "", tool_calls: [], tool_call_id: null,
                                   status: "complete", model_id: null, usage: null, error: null, attachments: [],
                                   request_id: null, ...fields });
    const s = loadHistory(end, [
      row(4, { role: "tool", content: "ABC", tool_call_id: "c1", parent_id: 2 }),
      row(3, { role: "user", content: "answer in French", request_id: "r2", parent_id: 4 }),
      row(5, { role: "assistant", content: "Done, in French.", parent_id: 3 }),
    ], false);
    assert.deepEqual(s.messages.map((m) => m.id), [1, 2, 4, 3, 5]);
    assert.deepEqual(summary(s).filter(([, role]) => role !== "tool"), summary(end));
  });
});

describe("approval_required", () => {
  test("can_always is kept, and true when the server does not say", () => {
    nextId = 0;
    let s = fold(initialState("c"), [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k1", name: "shell", message_id: 2 }),
      ev("approval_required", { approval_id: "a1", call_id: "k1", name: "shell",
                                arguments: '{"command": "echo a; echo b"}', can_always: false }),
    ]);
    assert.deepEqual(s.approvals, [{ approval_id: "a1", call_id: "k1", name: "shell",
                                     arguments: '{"command": "echo a; echo b"}', can_always: false }]);
    s = fold(s, [
      ev("tool_end", { call_id: "k1", name: "shell", ok: true, output: "a\nb\n[exit code 0 · 3 ms]", duration_ms: 5 }),
      ev("tool_preparing", { call_id: "k2", name: "guarded", message_id: 2 }),
      ev("approval_required", { approval_id: "a2", call_id: "k2", name: "guarded", arguments: "{}" }),
    ]);
    assert.deepEqual(s.approvals.map((a) => [a.approval_id, a.can_always]), [["a2", true]]);
    const call = s.messages[0].toolCalls.find((c) => c.id === "k1");
    assert.deepEqual([call.state, call.ok, call.durationMs], ["done", true, 5]);
  });

  test("tool_start shows the arguments that were approved (edited), and drops the card", () => {
    nextId = 0;
    const s = fold(initialState("c"), [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k", name: "guarded", message_id: 2 }),
      ev("approval_required", { approval_id: "a1", call_id: "k", name: "guarded", arguments: '{"text": "as asked"}',
                                can_always: true }),
      ev("tool_start", { call_id: "k", name: "guarded", arguments: '{"text": "as edited"}', message_id: 2 }),
    ]);
    assert.deepEqual(s.approvals, []);
    assert.equal(s.messages[0].toolCalls[0].arguments, '{"text": "as edited"}');
    assert.equal(s.messages[0].toolCalls[0].state, "running");
  });
});

describe("edited arguments", () => {
  const row = (id, fields) => ({ id, chat_id: "c", content: "", reasoning: "", tool_calls: [], tool_call_id: null,
                                 status: "complete", model_id: null, usage: null, error: null, attachments: [],
                                 request_id: null, ...fields });

  test("a call that ran edited keeps what ran when the saved step (the model's arguments) is read", () => {
    nextId = 0;
    let s = fold(initialState("c"), [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k", name: "guarded", message_id: 2 }),
      ev("approval_required", { approval_id: "a1", call_id: "k", name: "guarded", arguments: '{"text": "as asked"}',
                                can_always: true }),
      ev("tool_start", { call_id: "k", name: "guarded", arguments: '{"text": "as edited"}', message_id: 2 }),
      ev("tool_end", { call_id: "k", name: "guarded", ok: true, output: '{"echo": "as edited"}', duration_ms: 1 }),
    ]);
    assert.deepEqual([s.messages[0].toolCalls[0].arguments, s.messages[0].toolCalls[0].edited],
      ['{"text": "as edited"}', true]);
    s = loadHistory(s, [
      row(2, { role: "assistant", tool_calls: [{ id: "k", name: "guarded", arguments: '{"text": "as asked"}' }] }),
    ], false);
    assert.equal(s.messages[0].toolCalls[0].arguments, '{"text": "as edited"}');
  });

  test("an unedited call is not marked", () => {
    nextId = 0;
    const s = fold(initialState("c"), [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k", name: "guarded", message_id: 2 }),
      ev("approval_required", { approval_id: "a1", call_id: "k", name: "guarded", arguments: '{"text": "x"}' }),
      ev("tool_start", { call_id: "k", name: "guarded", arguments: '{"text": "x"}', message_id: 2 }),
    ]);
    assert.equal(s.messages[0].toolCalls[0].edited, undefined);
  });

  test("from history, the result's note gives the arguments that ran and is not shown as output", () => {
    const s = loadHistory(initialState("c"), [
      row(2, { role: "assistant", tool_calls: [{ id: "k", name: "guarded", arguments: '{"text": "as asked"}' }] }),
      row(3, { role: "tool", tool_call_id: "k",
               content: '[The person edited the arguments before allowing this call; it ran with: {"text": "as edited"}]\n{"echo": "as edited"}' }),
    ], false);
    const call = s.messages[0].toolCalls[0];
    assert.deepEqual([call.arguments, call.edited, call.output, call.state],
      ['{"text": "as edited"}', true, '{"echo": "as edited"}', "done"]);
  });
});

test("approval_required of a new or changed MCP tool keeps what it says it does now", () => {
  nextId = 0;
  const s = fold(initialState("c"), [
    ev("turn_start", { user_message_id: 1, continue_message_id: null }),
    ev("approval_required", { approval_id: "a1", call_id: "k", name: "mcp__files__read", arguments: "{}",
                              can_always: true, changed: true, description: "Reads any file." }),
    ev("approval_required", { approval_id: "a2", call_id: "k2", name: "guarded", arguments: "{}", can_always: true }),
  ]);
  assert.deepEqual(s.approvals[0], { approval_id: "a1", call_id: "k", name: "mcp__files__read", arguments: "{}",
                                     can_always: true, changed: true, description: "Reads any file." });
  assert.equal("changed" in s.approvals[1], false);
});

test("a saved tool result marked tool_error shows its call failed", () => {
  const row = (id, fields) => ({ id, chat_id: "c", content: "", reasoning: "", tool_calls: [], tool_call_id: null,
                                 status: "complete", model_id: null, usage: null, error: null, attachments: [],
                                 request_id: null, ...fields });
  const s = loadHistory(initialState("c"), [
    row(2, { role: "assistant", tool_calls: [{ id: "k", name: "upper", arguments: "{}" }, { id: "j", name: "upper", arguments: "{}" }] }),
    row(3, { role: "tool", tool_call_id: "k", content: "boom", tool_error: true }),
    row(4, { role: "tool", tool_call_id: "j", content: "OK" }),
  ], false);
  assert.deepEqual(s.messages[0].toolCalls.map((c) => [c.id, c.ok]), [["k", false], ["j", true]]);
});
