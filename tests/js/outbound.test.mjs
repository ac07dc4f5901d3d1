// approval_required's `outbound` in the reducer (web/js/reducer.js): a call that would send text
// off the machine after the conversation read private content keeps what it would send and why,
// as plain strings for the card's text nodes (docs/PROTOCOL.md "Approvals").
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { deepFreeze } from "./freeze.mjs";

let nextId = 0;
const ev = (type, fields = {}) => ({ type, event_id: ++nextId, turn_id: "t_1", epoch: "e1", ...fields });

function fold(state, events) {
  for (const e of events) state = applyEvent(deepFreeze(state), deepFreeze(e));
  return state;
}

test("an outbound approval keeps what it would send and why; others have no such field", () => {
  const sends = '<img src=x onerror="alert(1)"> API_KEY=sk-live';
  const s = fold(initialState("c"), [
    ev("turn_start", { user_message_id: 1, continue_message_id: null }),
    ev("approval_required", { approval_id: "a1", call_id: "k1", name: "web_search", arguments: JSON.stringify({ query: sends }),
                              can_always: false, outbound: { sends, reason: "This conversation has read your workspace files." } }),
    ev("approval_required", { approval_id: "a2", call_id: "k2", name: "web_search", arguments: '{"query": "q"}', can_always: true }),
  ]);
  assert.deepEqual(s.approvals[0], { approval_id: "a1", call_id: "k1", name: "web_search",
                                     arguments: JSON.stringify({ query: sends }), can_always: false,
                                     outbound: { sends, reason: "This conversation has read your workspace files." } });
  assert.equal("outbound" in s.approvals[1], false);
  assert.equal(s.approvals[1].can_always, true);
});

test("a fetch into the person's own network keeps its address and why, as plain strings", () => {
  const url = 'http://127.0.0.1:5000/<b>admin</b>';
  const s = fold(initialState("c"), [
    ev("turn_start", { user_message_id: 1, continue_message_id: null }),
    ev("approval_required", { approval_id: "a1", call_id: "k1", name: "web_fetch", arguments: JSON.stringify({ url }),
                              can_always: false, local: { url, reason: "This address is on this computer." } }),
    ev("approval_required", { approval_id: "a2", call_id: "k2", name: "web_fetch", arguments: '{"url": "https://x.example/"}',
                              can_always: true }),
  ]);
  assert.deepEqual(s.approvals[0].local, { url, reason: "This address is on this computer." });
  assert.equal("local" in s.approvals[1], false);
});
