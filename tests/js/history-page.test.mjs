// The history pages module (web/js/history-page.js), on its own: pages merged into the
// branch shown by their overlap, a row read again unchanged kept as the same object, tool
// results shown on their calls, another branch looked at read-only, a branch replaced
// below what it shares with the one shown. Events do not come into it (fold tests:
// reducer.test.mjs, versions.test.mjs).
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { initialState } from "../../web/js/reducer.js";
import { localSend } from "../../web/js/turn-events.js";
import {
  loadHistory, loadEarlier, replaceBranch, showBranch, showLive, shownMessages,
} from "../../web/js/history-page.js";
import { deepFreeze } from "./freeze.mjs";

const row = (id, fields = {}) => ({ id, role: id % 2 ? "user" : "assistant", content: `m${id}`, status: "complete",
                                    parent_id: id > 1 ? id - 1 : null, ...fields });
const ids = (messages) => messages.map((m) => m.id);
const page = (...nums) => nums.map((n) => row(n));

test("the newest page, then an older one above it", () => {
  let state = loadHistory(deepFreeze(initialState("c_1")), page(5, 6, 7), true);
  assert.deepEqual(ids(state.messages), [5, 6, 7]);
  assert.equal(state.hasMore, true);
  state = loadEarlier(deepFreeze(state), page(2, 3, 4), false);
  assert.deepEqual(ids(state.messages), [2, 3, 4, 5, 6, 7]);
  assert.equal(state.hasMore, false);
});

test("a page read again: unchanged rows stay the same objects, new rows go after the overlap", () => {
  const state = loadHistory(initialState("c_1"), page(1, 2, 3), false);
  const again = loadHistory(deepFreeze(state), page(2, 3, 4), false);
  assert.deepEqual(ids(again.messages), [1, 2, 3, 4]);
  assert.equal(again.messages[1], state.messages[1]);
  assert.equal(again.messages[2], state.messages[2]);
  const edited = loadHistory(again, [row(4, { content: "changed" })], false);
  assert.notEqual(edited.messages[3], again.messages[3]);
  assert.equal(edited.messages[3].content, "changed");
});

test("a send the page lists is no longer pending", () => {
  let state = localSend(initialState("c_1"), "r_1", "m1");
  assert.equal(state.pending.length, 1);
  state = loadHistory(state, [row(1, { request_id: "r_1" })], false);
  assert.deepEqual(state.pending, []);
});

test("a tool result row shows on its call, with the arguments that ran when the person edited them", () => {
  const items = [
    row(1),
    row(2, { content: "", tool_calls: [{ id: "call_a", name: "read_file", arguments: '{"path":"a"}' },
                                       { id: "call_b", name: "read_file", arguments: '{"path":"b"}' }] }),
    { id: 3, role: "tool", tool_call_id: "call_a", content: "A's text", status: "complete", parent_id: 2 },
    { id: 4, role: "tool", tool_call_id: "call_b", status: "complete", parent_id: 3,
      content: '[The person edited the arguments before allowing this call; it ran with: {"path":"c"}]\nC\'s text' },
  ];
  const [a, b] = loadHistory(initialState("c_1"), items, false).messages[1].toolCalls;
  assert.deepEqual([a.state, a.output, a.ok, !!a.edited], ["done", "A's text", true, false]);
  assert.deepEqual([b.output, b.arguments, b.edited], ["C's text", '{"path":"c"}', true]);
});

test("another branch looked at read-only, and back to the live one", () => {
  const state = loadHistory(initialState("c_1"), page(1, 2, 3, 4), false);
  // Version 13 of message 3 (same parent, 2), with its reply 14.
  const other = [row(1), row(2), row(13, { parent_id: 2 }), row(14, { parent_id: 13 })];
  const looked = showBranch(deepFreeze(state), 13, other, false);
  assert.deepEqual(ids(shownMessages(looked)), [1, 2, 13, 14]);
  assert.equal(looked.messages, state.messages, "the live branch is left as it was");
  assert.equal(looked.view.through, 13);
  const back = showLive(looked);
  assert.equal(back.view, null);
  assert.deepEqual(ids(shownMessages(back)), [1, 2, 3, 4]);
  assert.equal(showLive(back), back);
});

test("a branch made active replaces the one shown below what they share", () => {
  const state = loadHistory(initialState("c_1"), page(1, 2, 3, 4), false);
  const shared = state.messages[0];
  const next = replaceBranch(deepFreeze(state), [row(2), row(13, { parent_id: 2 }), row(14, { parent_id: 13 })], true);
  assert.deepEqual(ids(next.messages), [1, 2, 13, 14]);
  assert.equal(next.messages[0], shared, "what lies above the page stays as it was drawn");
  assert.equal(next.hasMore, false, "the rows above the page are all there");
  assert.equal(next.view, null);
  assert.equal(next.branchStale, null);
});
