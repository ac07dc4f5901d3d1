// The rule a streaming reply's bubble relies on to draw each delta itself, with no frame
// (web/app/chat-session.js watchText, web/app/views/message.js _takeDelta): a `content` or
// `reasoning` event whose delta continues the text its message had — the message streaming,
// that field not empty, its new length the old one plus the delta's — changed that field
// and nothing else in the state. Any other outcome (a message new or started over) fails
// that test, and the view draws the message in a frame instead.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";
import { localSend } from "../../web/js/turn-events.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "events");
const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).sort()
  .map((f) => ({ file: f, ...JSON.parse(readFileSync(join(FIXTURES, f), "utf8")) }));

/** What the view's test sees: whether the delta continues the text `was` had. */
function continues(field, delta, now, was) {
  return !!delta && !!was && !!now && was.status === "streaming" && !!was[field]
    && now[field].length === was[field].length + delta.length;
}

/** Fold `events`, checking the rule at each text event; returns how many deltas continued. */
function foldChecked(state, events) {
  let continued = 0;
  for (const e of events) {
    const before = state;
    state = applyEvent(before, e);
    if (e.type !== "content" && e.type !== "reasoning") continue;
    const id = e.message_id ?? state.turn?.messageId;
    const was = before.messages.findLast((m) => m.id === id);
    const now = state.messages.findLast((m) => m.id === id);
    if (!continues(e.type, e.delta, now, was)) continue;
    continued += 1;
    assert.equal(now[e.type], was[e.type] + e.delta, `event ${e.event_id}: the delta is appended`);
    for (const k of Object.keys(state)) {
      if (k !== "messages" && k !== "lastEventId") assert.equal(state[k], before[k], `event ${e.event_id} changed ${k}`);
    }
    assert.equal(state.messages.length, before.messages.length);
    state.messages.forEach((m, i) => { if (m !== now) assert.equal(m, before.messages[i], `event ${e.event_id} moved a message`); });
    for (const k of new Set([...Object.keys(now), ...Object.keys(was)])) {
      if (k !== e.type) assert.equal(now[k], was[k], `event ${e.event_id} changed the message's ${k}`);
    }
  }
  return continued;
}

describe("a delta that continues its message's text changes only that text", () => {
  for (const fx of fixtures) {
    test(fx.file, () => {
      let state = initialState(fx.chat_id);
      if (fx.history) state = loadHistory(state, fx.history.items, fx.history.has_more);
      for (const p of fx.pending || []) state = localSend(state, p.requestId, p.content);
      foldChecked(state, fx.events);
    });
  }

  test("the fixtures hold such deltas at all", () => {
    let total = 0;
    for (const fx of fixtures) {
      let state = initialState(fx.chat_id);
      if (fx.history) state = loadHistory(state, fx.history.items, fx.history.has_more);
      for (const p of fx.pending || []) state = localSend(state, p.requestId, p.content);
      total += foldChecked(state, fx.events);
    }
    assert.ok(total >= 10, `only ${total} continuing deltas in the fixtures`);
  });
});

describe("a delta that starts a message over does not continue it", () => {
  const E = "e1";
  const ev = (type, id, fields) => ({ type, event_id: id, epoch: E, turn_id: "t_2", ...fields });
  const history = [
    { id: 1, role: "user", content: "Hi", status: "complete" },
    { id: 2, role: "assistant", content: "Hello th", reasoning: "", status: "streaming" },
  ];

  test("a continued reply's first delta (the saved text sent again)", () => {
    let state = loadHistory(initialState("c_1"), history, false);
    state = applyEvent(state, ev("turn_start", 1, { user_message_id: null, continue_message_id: 2 }));
    const was = state.messages[1];
    const next = applyEvent(state, ev("content", 2, { message_id: 2, delta: "Hello th" }));
    assert.equal(continues("content", "Hello th", next.messages[1], was), false);
  });

  test("a turn replayed over the history's streaming row after a reload", () => {
    const state = loadHistory(initialState("c_1"), history, false);
    const withTurn = applyEvent(state, ev("turn_start", 1, { user_message_id: 1 }));
    const was = withTurn.messages[1];
    const next = applyEvent(withTurn, ev("content", 2, { message_id: 2, delta: "H" }));
    assert.equal(next.messages[1].content, "H");
    assert.equal(continues("content", "H", next.messages[1], was), false);
  });
});
