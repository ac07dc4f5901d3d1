// The fold's core (web/js/reducer.js): each feature hands its handlers and state slices to
// it with registerHandlers, several handlers of one type run in registration order, a
// server restart runs the features' NEW_EPOCH handlers, and positions are the core's.
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent, registerHandlers } from "../../web/js/reducer.js";
import { NEW_EPOCH } from "../../web/js/chat-state.js";
import { deepFreeze } from "./freeze.mjs";

// This file's own feature: node runs each test file in a process of its own, so what it
// registers reaches no other test.
const seen = [];
registerHandlers({
  probe_note: (state, e) => ({ ...state, probeNotes: [...state.probeNotes, e.note] }),
  [NEW_EPOCH]: (state) => ({ ...state, probeNotes: [] }),
}, { probeNotes: [] });
registerHandlers({
  probe_note: (state, e) => { seen.push([state.probeNotes.at(-1), state.lastEventId, e.note]); return state; },
});

const ev = (id, fields = {}) => ({ type: "probe_note", event_id: id, epoch: "e1", ...fields });

test("a feature's slices start in every new state, with the core's positions", () => {
  const state = initialState("c_1");
  assert.deepEqual(state.probeNotes, []);
  assert.equal(state.chatId, "c_1");
  assert.equal(state.lastEventId, 0);
  assert.equal(state.epoch, null);
  // The features the app registers keep theirs too.
  for (const slice of ["messages", "pending", "turn", "queue", "approvals", "questions", "view", "compaction", "research"]) {
    assert.ok(slice in state, slice);
  }
});

test("handlers of one type run in registration order, each on what the one before returned", () => {
  seen.length = 0;
  const state = applyEvent(deepFreeze(initialState("c_1")), deepFreeze(ev(1, { note: "a" })));
  assert.deepEqual(state.probeNotes, ["a"]);
  // The second handler saw the first one's result, already positioned at the event.
  assert.deepEqual(seen, [["a", 1, "a"]]);
});

test("an event already applied, or of a type nobody registered, changes nothing", () => {
  const once = applyEvent(initialState("c_1"), ev(1, { note: "a" }));
  assert.equal(applyEvent(once, ev(1, { note: "a" })), once);
  assert.equal(applyEvent(once, { type: "probe_unknown", event_id: 2, epoch: "e1" }), once);
  assert.equal(applyEvent(once, { type: "pong" }), once);
  assert.equal(applyEvent(once, null), once);
});

test("a new epoch runs every feature's NEW_EPOCH handler, and ids start over", () => {
  let state = applyEvent(initialState("c_1"), ev(5, { note: "a" }));
  state = applyEvent(deepFreeze(state), deepFreeze(ev(1, { note: "b", epoch: "e2" })));
  assert.deepEqual(state.probeNotes, ["b"]);
  assert.equal(state.lastEventId, 1);
  assert.equal(state.epoch, "e2");
});

test("the first epoch seen is not a restart", () => {
  const state = applyEvent(initialState("c_1"), ev(3, { note: "a" }));
  assert.deepEqual(state.probeNotes, ["a"]);
});

test("a handler must be a function, and a slice has one owner", () => {
  assert.throws(() => registerHandlers({ probe_bad: "not a function" }), TypeError);
  assert.throws(() => registerHandlers({}, { probeNotes: [] }), /two features keep the state's probeNotes/);
  assert.throws(() => registerHandlers({}, { messages: [] }), /messages/);
});
