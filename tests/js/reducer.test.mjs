// The client reducer (web/js/reducer.js) against the shared event fixtures
// (tests/fixtures/events, also read by tests/test_event_fixtures.py) and its
// own rules: purity, replay safety, history merge, optimistic sends.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { localSend } from "../../web/js/turn-events.js";
import { deepFreeze } from "./freeze.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(here, "..", "fixtures", "events");
const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).sort()
  .map((f) => ({ file: f, ...JSON.parse(readFileSync(join(FIXTURES, f), "utf8")) }));

/** `actual` holds everything `expected` names: objects by key, arrays element by element and length. */
function assertMatches(actual, expected, path = "state") {
  if (expected === null || typeof expected !== "object") {
    assert.deepStrictEqual(actual, expected, `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length,
      `${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`);
    expected.forEach((e, i) => assertMatches(actual[i], e, `${path}[${i}]`));
    return;
  }
  assert.ok(actual && typeof actual === "object", `${path}: expected an object, got ${JSON.stringify(actual)}`);
  for (const [key, e] of Object.entries(expected)) assertMatches(actual[key], e, `${path}.${key}`);
}

/** The state a fixture starts from: its history page and optimistic sends. */
function startState(fx) {
  let state = initialState(fx.chat_id);
  if (fx.history) state = loadHistory(state, fx.history.items, fx.history.has_more);
  for (const p of fx.pending || []) state = localSend(state, p.requestId, p.content);
  return state;
}

function run(fx, { freeze = false } = {}) {
  let state = startState(fx);
  for (const event of fx.events) {
    if (freeze) deepFreeze(state);
    state = applyEvent(state, freeze ? deepFreeze(structuredClone(event)) : event);
  }
  return state;
}

/**
 * What the socket writer may send instead (backend/ws.py `coalesce`): runs of
 * deltas of one message merged into one event with the id of the last. Only
 * events the hub published once are merged (a replay is sent from one cursor).
 */
function coalesced(events) {
  const out = [];
  const seen = new Set();
  for (const e of events) {
    const key = `${e.epoch}/${e.event_id}`;
    if (e.type !== "snapshot" && seen.has(key)) continue;
    seen.add(key);
    const prev = out[out.length - 1];
    if (prev && (e.type === "content" || e.type === "reasoning") && prev.type === e.type
        && prev.message_id === e.message_id && prev.turn_id === e.turn_id && prev.epoch === e.epoch) {
      out[out.length - 1] = { ...e, delta: prev.delta + e.delta };
    } else {
      out.push(e);
    }
  }
  return out;
}

describe("shared event fixtures", () => {
  assert.ok(fixtures.length >= 12, "the fixture set is there");
  for (const fx of fixtures) {
    test(`${fx.file}: ${fx.description}`, () => {
      assertMatches(run(fx), fx.expect);
    });

    test(`${fx.file}: never mutates a state or an event (deep-frozen)`, () => {
      assertMatches(run(fx, { freeze: true }), fx.expect);
    });

    test(`${fx.file}: merged deltas build the same messages`, () => {
      assertMatches(run({ ...fx, events: coalesced(fx.events) }), { messages: fx.expect.messages ?? [] });
    });

    test(`${fx.file}: replaying every event again changes nothing`, () => {
      const once = run(fx);
      let state = once;
      for (const event of fx.events) {
        // Only the events of the last epoch: older epochs are gone for good.
        if (event.epoch === once.epoch && event.type !== "snapshot") state = applyEvent(state, event);
      }
      assert.equal(state, once);
    });
  }
});

describe("applyEvent", () => {
  const E = "e1";
  const ev = (id, type, fields = {}) => ({ type, event_id: id, turn_id: "t_1", epoch: E, ...fields });

  test("returns the same object for ignored events", () => {
    let s = applyEvent(initialState("c"), ev(5, "turn_start", { user_message_id: null, continue_message_id: null }));
    s = applyEvent(s, ev(6, "content", { delta: "hi", message_id: 2 }));
    assert.equal(applyEvent(s, { type: "pong" }), s);
    assert.equal(applyEvent(s, ev(6, "content", { delta: "hi", message_id: 2 })), s, "a repeated id");
    assert.equal(applyEvent(s, ev(3, "content", { delta: "old", message_id: 2 })), s, "an older id");
    assert.equal(applyEvent(s, ev(9, "brand_new_type", { x: 1 })), s, "an unknown type");
    assert.equal(applyEvent(s, null), s);
    assert.equal(s.messages[0].content, "hi");
  });

  test("a reply re-sent over its saved text is marked replayed; a live one is not", () => {
    const saved = { id: 2, role: "assistant", content: "The answer.", reasoning: "Let me think.", status: "complete",
                    tool_calls: [], created_at: 1 };
    let s = loadHistory(initialState("c"), [{ id: 1, role: "user", content: "q", status: "complete" }, saved], false);
    s = applyEvent(s, ev(1, "turn_start", { user_message_id: 1, continue_message_id: null }));
    s = applyEvent(s, ev(2, "reasoning", { delta: "Let me think.", message_id: 2 }));
    const replay = s.messages.find((m) => m.id === 2);
    assert.equal(replay.replayed, true);
    assert.equal(replay.reasoning, "Let me think.");
    assert.equal(replay.content, "");
    let live = applyEvent(initialState("c"), ev(1, "turn_start", { user_message_id: 1, continue_message_id: null }));
    live = applyEvent(live, ev(2, "reasoning", { delta: "Hmm.", message_id: 2 }));
    assert.ok(!live.messages.find((m) => m.id === 2).replayed);
  });

  test("a new epoch restarts the ids", () => {
    let s = applyEvent(initialState("c"), ev(50, "title_update", { turn_id: null, title: "A" }));
    s = applyEvent(s, { ...ev(1, "title_update", { turn_id: null, title: "B" }), epoch: "e2" });
    assert.equal(s.title, "B");
    assert.equal(s.epoch, "e2");
    assert.equal(s.lastEventId, 1);
  });

  test("a server restart marks what was streaming interrupted", () => {
    let s = applyEvent(initialState("c"), ev(1, "turn_start", { user_message_id: 1, continue_message_id: null }));
    s = applyEvent(s, ev(2, "content", { delta: "par", message_id: 2 }));
    s = applyEvent(s, { type: "queue", event_id: 1, turn_id: null, epoch: "e2", items: [] });
    assert.equal(s.messages[0].status, "interrupted");
    assert.equal(s.turn.status, "failed");
  });

  test("errors outside a turn show a notice; queue_full marks the refused send", () => {
    let s = localSend(initialState("c"), "r1", "eleventh");
    s = applyEvent(s, { type: "error", event_id: 3, turn_id: null, epoch: E, code: "queue_full",
                        message: "10 messages are already waiting.", retryable: false });
    assert.deepEqual(s.notice, { kind: "error", code: "queue_full", message: "10 messages are already waiting.",
                                 retryable: false });
    assert.equal(s.pending[0].failed, "queue_full");
  });

  test("tool_end without a message_id finds its call", () => {
    let s = initialState("c");
    s = applyEvent(s, ev(1, "turn_start", { user_message_id: 1, continue_message_id: null }));
    s = applyEvent(s, ev(2, "tool_preparing", { call_id: "k", name: "upper", message_id: 4 }));
    s = applyEvent(s, ev(3, "tool_start", { call_id: "k", name: "upper", arguments: "{}", message_id: 4 }));
    assert.equal(s.messages[0].toolCalls[0].state, "running");
    assert.equal(s.messages[0].status, "complete", "tools run only after their step was saved");
    s = applyEvent(s, ev(4, "tool_end", { call_id: "k", name: "upper", ok: true, output: "K", duration_ms: 2 }));
    assert.deepEqual(s.messages[0].toolCalls[0],
      { id: "k", name: "upper", arguments: "{}", state: "done", ok: true, output: "K", durationMs: 2 });
  });
});

describe("localSend and accepted", () => {
  test("the optimistic message becomes the saved one", () => {
    const empty = deepFreeze(initialState("c"));
    const sent = deepFreeze(localSend(empty, "r1", "Hello"));
    assert.deepEqual(sent.pending, [{ requestId: "r1", content: "Hello" }]);
    assert.equal(localSend(sent, "r1", "Hello"), sent, "the same request id twice is one message");
    const s = applyEvent(sent, { type: "accepted", event_id: 1, turn_id: null, epoch: "e", request_id: "r1",
                                 message_id: 9, queued: true });
    assert.deepEqual(s.pending, []);
    assertMatches(s.messages, [{ id: 9, role: "user", content: "Hello", status: "queued", requestId: "r1" }]);
  });

  test("attached files stay with the message from the send to the saved row", () => {
    const file = { id: "file_1", name: "dot.png", mime: "image/png", size: 70, sha256: "ab" };
    const sent = deepFreeze(localSend(initialState("c"), "r1", "", [file]));
    assert.deepEqual(sent.pending, [{ requestId: "r1", content: "", attachments: [file] }]);
    let s = applyEvent(sent, { type: "accepted", event_id: 1, turn_id: null, epoch: "e", request_id: "r1",
                               message_id: 4, queued: false });
    assert.deepEqual(s.messages[0].attachments, [file]);
    s = loadHistory(s, [{ id: 4, role: "user", content: "", status: "complete", attachments: [file] }], false);
    assert.deepEqual(s.messages[0].attachments, [file]);
    // Another window learns them from the accepted event itself.
    s = applyEvent(initialState("c"), { type: "accepted", event_id: 1, turn_id: null, epoch: "e",
                                        request_id: "other", message_id: 5, queued: false, attachments: [file] });
    assert.deepEqual(s.messages[0].attachments, [file]);
  });

  test("an accepted from another window leaves a placeholder for history to fill", () => {
    let s = applyEvent(initialState("c"), { type: "accepted", event_id: 1, turn_id: null, epoch: "e",
                                           request_id: "other", message_id: 3, queued: false });
    assert.equal(s.messages[0].placeholder, true);
    s = loadHistory(s, [{ id: 3, role: "user", content: "typed elsewhere", status: "complete" }], false);
    assertMatches(s.messages, [{ id: 3, content: "typed elsewhere", placeholder: false }]);
  });
});

describe("loadHistory", () => {
  const row = (id, fields = {}) => ({ id, chat_id: "c", role: "user", content: `m${id}`, reasoning: "",
                                      tool_calls: [], tool_call_id: null, status: "complete", model_id: null,
                                      usage: null, error: null, attachments: [], request_id: null, ...fields });

  test("merges pages by id, in id order, without mutating", () => {
    const first = deepFreeze(loadHistory(initialState("c"), [row(5), row(6)], true));
    assert.equal(first.hasMore, true);
    const both = loadHistory(first, [row(2), row(3), row(5, { content: "m5 edited" })], false);
    assert.deepEqual(both.messages.map((m) => m.id), [2, 3, 5, 6]);
    assert.equal(both.messages[2].content, "m5 edited");
    assert.equal(both.hasMore, false);
    assert.deepEqual(first.messages.map((m) => m.id), [5, 6]);
  });

  test("drops the optimistic copy of a message history already has", () => {
    const s = loadHistory(localSend(initialState("c"), "r7", "hi"), [row(1, { request_id: "r7", content: "hi" })], false);
    assert.deepEqual(s.pending, []);
    assert.equal(s.messages[0].requestId, "r7");
  });

  test("keeps the live text of a message the running turn is writing", () => {
    let s = initialState("c");
    s = applyEvent(s, { type: "turn_start", event_id: 1, turn_id: "t", epoch: "e", user_message_id: 1,
                        continue_message_id: null });
    s = applyEvent(s, { type: "content", event_id: 2, turn_id: "t", epoch: "e", delta: "Hello wor", message_id: 2 });
    s = loadHistory(s, [row(1), row(2, { role: "assistant", content: "Hello", status: "streaming" })], false);
    assertMatches(s.messages, [{ id: 1 }, { id: 2, content: "Hello wor", status: "streaming" }]);
  });

  test("shows tool results on their calls", () => {
    const s = loadHistory(initialState("c"), [
      row(1),
      row(2, { role: "assistant", content: "", tool_calls: [{ id: "k", name: "upper", arguments: "{}" }] }),
      row(3, { role: "tool", content: "OK", tool_call_id: "k" }),
    ], false);
    assertMatches(s.messages[1].toolCalls, [{ id: "k", state: "done", output: "OK", ok: true }]);
    assertMatches(s.messages[2], { role: "tool", toolCallId: "k" });
  });
});
