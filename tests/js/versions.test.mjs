// Versions and branches in the reducer (web/js/reducer.js, CONTRACT §5): `branched`,
// `active_changed`, switching the branch shown (replaceBranch), looking at another branch
// while a reply runs (showBranch / showLive), and the branch order of messages.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { loadHistory, loadEarlier, replaceBranch, showBranch, showLive, shownMessages } from "../../web/js/history-page.js";
import { deepFreeze } from "./freeze.mjs";

const E = "e1";

let nextId = 0;
const ev = (type, fields = {}) => ({ type, event_id: ++nextId, turn_id: "t_1", epoch: E, ...fields });

/** Fold events over a state, freezing each state and event on the way (purity). */
function fold(state, events) {
  for (const e of events) state = applyEvent(deepFreeze(state), deepFreeze(e));
  return state;
}

const versions = (ids, id) => ({ index: ids.indexOf(id) + 1, count: ids.length, ids });

/** A row of GET …/messages. */
const row = (id, parent, fields = {}) => ({
  id, chat_id: "c", role: id % 2 ? "user" : "assistant", content: `m${id}`, reasoning: "", tool_calls: [],
  tool_call_id: null, status: "complete", model_id: null, usage: null, error: null, attachments: [],
  request_id: null, parent_id: parent, versions: { index: 1, count: 1, ids: [id] }, ...fields,
});

const ids = (messages) => messages.map((m) => m.id);
const content = (state, id) => state.messages.find((m) => m.id === id)?.content;

/** 1 → 2 → 3 → 4: two turns, loaded. */
function chat() {
  nextId = 0;
  return deepFreeze(loadHistory(initialState("c"), [row(1, null), row(2, 1), row(3, 2), row(4, 3)], false));
}

describe("branched", () => {
  test("an edit: what followed the edited message goes, the new version takes its place, the reply follows", () => {
    const before = chat();
    const s = fold(before, [
      ev("branched", { turn_id: null, message_id: 5, parent_id: 2, role: "user", content: "m3 again",
                       attachments: [], versions: versions([3, 5], 5) }),
      ev("turn_start", { user_message_id: 5, continue_message_id: null }),
      ev("content", { delta: "new answer", message_id: 6 }),
      ev("done", { message_id: 6 }),
      ev("turn_end", { status: "completed" }),
    ]);
    assert.deepEqual(ids(s.messages), [1, 2, 5, 6]);
    const edited = s.messages[2];
    assert.deepEqual([edited.role, edited.content, edited.status, edited.parentId], ["user", "m3 again", "complete", 2]);
    assert.deepEqual(edited.versions, { index: 2, count: 2, ids: [3, 5] });
    // Nothing else was touched: the rows above are the very same objects.
    assert.equal(s.messages[0], before.messages[0]);
    assert.equal(content(s, 6), "new answer");
  });

  test("a regenerate: the old reply goes, the new one streams in its place", () => {
    const s = fold(chat(), [
      ev("branched", { turn_id: null, message_id: 5, parent_id: 3, role: "assistant", content: "",
                       attachments: [], versions: versions([4, 5], 5) }),
    ]);
    assert.deepEqual(ids(s.messages), [1, 2, 3, 5]);
    assert.deepEqual([s.messages[3].role, s.messages[3].status], ["assistant", "streaming"]);
    const t = fold(s, [
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("content", { delta: "Second ", message_id: 5 }),
      ev("content", { delta: "take.", message_id: 5 }),
    ]);
    assert.deepEqual(ids(t.messages), [1, 2, 3, 5]);
    assert.equal(content(t, 5), "Second take.");
  });

  test("the model named by `regenerate` is on the new reply when the event says it", () => {
    const s = fold(chat(), [
      ev("branched", { turn_id: null, message_id: 5, parent_id: 3, role: "assistant", content: "",
                       attachments: [], versions: versions([4, 5], 5), model_id: "tooly" }),
    ]);
    assert.equal(s.messages[3].modelId, "tooly");
  });

  test("queued messages stay: they wait for the chat, whatever its branch", () => {
    let s = loadHistory(chat(), [row(1, null), row(2, 1), row(3, 2), row(4, 3), row(9, null, { status: "queued" })], false);
    s = fold(s, [ev("branched", { turn_id: null, message_id: 10, parent_id: 1, role: "assistant", content: "",
                                  attachments: [], versions: versions([2, 10], 10) })]);
    assert.deepEqual(s.messages.map((m) => [m.id, m.status]), [[1, "complete"], [10, "streaming"], [9, "queued"]]);
  });

  test("the parent above the page shown: the replaced version is found by its parent", () => {
    nextId = 0;
    // The newest page only: 3 and 4 (their parent 2 is not loaded).
    let s = loadHistory(initialState("c"), [row(3, 2), row(4, 3)], true);
    s = fold(s, [ev("branched", { turn_id: null, message_id: 5, parent_id: 2, role: "user", content: "again",
                                  attachments: [], versions: versions([3, 5], 5) })]);
    assert.deepEqual(ids(s.messages), [5]);
    assert.equal(s.hasMore, true, "what is above the new version can still be read");
    // The older page lands above it.
    s = loadHistory(s, [row(1, null), row(2, 1)], false);
    assert.deepEqual(ids(s.messages), [1, 2, 5]);
  });

  test("reloaded mid-reply: the turn re-sent over history shows the reply once, in place, at every step", () => {
    nextId = 0;
    // History read after the regenerate: 5 is the new reply, partly flushed.
    let s = loadHistory(initialState("c"), [row(1, null), row(2, 1), row(3, 2),
      row(5, 3, { content: "Second ta", status: "streaming", versions: versions([4, 5], 5) })], false);
    const replay = [
      ev("branched", { turn_id: null, message_id: 5, parent_id: 3, role: "assistant", content: "",
                       attachments: [], versions: versions([4, 5], 5) }),
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("content", { delta: "Second ", message_id: 5 }),
      ev("content", { delta: "take.", message_id: 5 }),
      ev("done", { message_id: 5 }),
      ev("turn_end", { status: "completed" }),
    ];
    for (const e of replay) {
      s = fold(s, [e]);
      assert.deepEqual(ids(s.messages), [1, 2, 3, 5], e.type);
    }
    assert.equal(content(s, 5), "Second take.");
    assert.equal(s.messages[3].status, "complete");
    assert.deepEqual(s.messages[3].versions, { index: 2, count: 2, ids: [4, 5] });
  });
});

describe("the last turn replayed after a reload, on a branch not shown", () => {
  // 4 was regenerated as 7 and the person switched back to 4 before reloading: the
  // history is 1 → 2 → 3 → 4, and the socket replays the turn that wrote 7.
  const history = () => {
    nextId = 0;
    return deepFreeze(loadHistory(initialState("c"), [row(1, null), row(2, 1), row(3, 2),
      row(4, 3, { versions: versions([4, 7], 4) })], false));
  };

  test("a regenerate's replies stay off the branch shown", () => {
    const before = history();
    const s = fold(before, [
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("content", { delta: "New take.", message_id: 7 }),
      ev("message_saved", { message_id: 7, role: "assistant" }),
      ev("done", { message_id: 7 }),
      ev("turn_end", { status: "completed" }),
    ]);
    assert.equal(s.messages, before.messages);
  });

  test("an edit's turn too (its user message is not shown)", () => {
    const before = history();
    const s = fold(before, [
      ev("turn_start", { user_message_id: 5, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k", name: "upper", message_id: 6 }),
      ev("content", { delta: "Edited answer.", message_id: 8 }),
      ev("turn_end", { status: "completed" }),
    ]);
    assert.equal(s.messages, before.messages);
  });

  test("a continue of a reply on another branch", () => {
    const before = history();
    const s = fold(before, [
      ev("turn_start", { user_message_id: null, continue_message_id: 7 }),
      ev("content", { delta: "New take, continued.", message_id: 7 }),
      ev("turn_end", { status: "completed" }),
    ]);
    assert.equal(s.messages, before.messages);
  });

  test("a stored snapshot of the chat's newest reply on another branch", () => {
    const before = history();
    const s = fold(before, [{ type: "snapshot", event_id: 9, last_event_id: 9, epoch: E, turn_id: null,
                              message_id: 7, content: "New take.", reasoning: "", tool_calls: [], status: "complete",
                              queue: [] }]);
    assert.equal(s.messages, before.messages);
  });

  test("the turn of the branch shown still adds what it writes after the history read", () => {
    nextId = 0;
    let s = loadHistory(initialState("c"), [row(1, null), row(2, 1, { status: "streaming" })], false);
    s = fold(s, [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("tool_preparing", { call_id: "k", name: "upper", message_id: 2 }),
      ev("tool_start", { call_id: "k", name: "upper", arguments: "{}", message_id: 2 }),
      ev("tool_end", { call_id: "k", name: "upper", ok: true, output: "K", duration_ms: 1 }),
      ev("content", { delta: "After the tool.", message_id: 4 }),
    ]);
    assert.deepEqual(ids(s.messages), [1, 2, 4]);
    // Its tool result read with the next page: the reply after it still follows.
    s = loadHistory(s, [row(2, 1, { tool_calls: [{ id: "k", name: "upper", arguments: "{}" }] }),
      row(3, 2, { role: "tool", tool_call_id: "k", content: "K" })], false);
    s = fold(s, [ev("content", { delta: " More.", message_id: 4 }), ev("content", { delta: "Next step.", message_id: 6 })]);
    assert.deepEqual(ids(s.messages), [1, 2, 3, 4, 6]);
  });
});

describe("branch order", () => {
  test("a queued message that starts its turn after a longer one follows it, whatever its id", () => {
    nextId = 0;
    let s = loadHistory(initialState("c"), [row(1, null)], false);
    s = fold(s, [
      ev("turn_start", { user_message_id: 1, continue_message_id: null }),
      ev("content", { delta: "step one", message_id: 2 }),
      ev("accepted", { request_id: "r", message_id: 3, queued: true }),
      ev("content", { delta: "step two", message_id: 5 }),
      ev("turn_end", { status: "completed" }),
      ev("turn_start", { turn_id: "t_2", user_message_id: 3, continue_message_id: null }),
      ev("content", { turn_id: "t_2", delta: "answer", message_id: 6 }),
    ]);
    assert.deepEqual(ids(s.messages), [1, 2, 5, 3, 6]);
    // The page read after it agrees, and brings the tool row between the steps.
    s = loadHistory(s, [row(1, null), row(2, 1), row(4, 2, { role: "tool" }), row(5, 4), row(3, 5), row(6, 3)], false);
    assert.deepEqual(ids(s.messages), [1, 2, 4, 5, 3, 6]);
  });

  test("a row read again unchanged is the same object (the view redraws nothing)", () => {
    const s = chat();
    const again = loadHistory(s, [row(3, 2), row(4, 3, { content: "m4 changed" })], false);
    assert.equal(again.messages[2], s.messages[2]);
    assert.notEqual(again.messages[3], s.messages[3]);
    assert.equal(again.messages[3].content, "m4 changed");
  });
});

describe("switching versions", () => {
  /** 1 → 2 → 3 → 4 is shown; 5 is the other version of 3, answered by 6. */
  const otherBranch = [row(1, null), row(2, 1), row(5, 2, { versions: versions([3, 5], 5) }), row(6, 5)];

  test("replaceBranch keeps what lies above the switched message and replaces the rest", () => {
    const s = chat();
    const t = replaceBranch(s, otherBranch, false);
    assert.deepEqual(ids(t.messages), [1, 2, 5, 6]);
    assert.equal(t.messages[0], s.messages[0]);
    assert.equal(t.messages[1], s.messages[1]);
    assert.deepEqual(t.messages[2].versions, { index: 2, count: 2, ids: [3, 5] });
  });

  test("a page that starts at the version switched to: the rows above it stay, older pages still to read", () => {
    nextId = 0;
    const s = loadHistory(initialState("c"), [row(2, 1), row(3, 2), row(4, 3)], true);
    const t = replaceBranch(s, [row(5, 2, { versions: versions([3, 5], 5) }), row(6, 5)], true);
    assert.deepEqual(ids(t.messages), [2, 5, 6]);
    assert.equal(t.hasMore, true);
  });

  test("a queued message stays through a switch", () => {
    const s = loadHistory(chat(), [row(4, 3), row(9, null, { status: "queued" })], false);
    assert.deepEqual(ids(replaceBranch(s, otherBranch, false).messages), [1, 2, 5, 6, 9]);
  });

  test("active_changed: the leaf shown changes nothing; another marks the branch stale until read", () => {
    const s = chat();
    const same = applyEvent(s, ev("active_changed", { turn_id: null, leaf_id: 4 }));
    assert.equal(same.messages, s.messages);
    assert.equal(same.branchStale, null);
    const stale = applyEvent(s, ev("active_changed", { turn_id: null, leaf_id: 6 }));
    assert.equal(stale.branchStale, 6);
    assert.deepEqual(ids(stale.messages), [1, 2, 3, 4]);
    const read = replaceBranch(stale, otherBranch, false);
    assert.equal(read.branchStale, null);
    assert.deepEqual(ids(read.messages), [1, 2, 5, 6]);
  });
});

describe("another branch while a reply runs", () => {
  /** 4 is being regenerated as 7 (versions [4, 7]) and streams; the person looks at 4 meanwhile. */
  function running() {
    return fold(chat(), [
      ev("branched", { turn_id: null, message_id: 7, parent_id: 3, role: "assistant", content: "",
                       attachments: [], versions: versions([4, 7], 7) }),
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
      ev("content", { delta: "New ", message_id: 7 }),
    ]);
  }
  const through4 = [row(1, null), row(2, 1), row(3, 2), row(4, 3, { versions: versions([4, 7], 4) })];

  test("the reply goes on streaming into the active branch, not shown, not lost, not doubled", () => {
    let s = running();
    const viewing = deepFreeze(showBranch(s, 4, through4, false));
    assert.deepEqual(ids(shownMessages(viewing)), [1, 2, 3, 4]);
    assert.deepEqual(viewing.view.messages[3].versions, { index: 1, count: 2, ids: [4, 7] });
    // The shared rows are the objects already drawn.
    assert.equal(viewing.view.messages[0], s.messages[0]);
    s = fold(viewing, [ev("content", { delta: "reply ", message_id: 7 }), ev("content", { delta: "text.", message_id: 7 })]);
    assert.equal(s.view, viewing.view, "the branch looked at does not change");
    assert.deepEqual(ids(s.messages), [1, 2, 3, 7]);
    assert.equal(content(s, 7), "New reply text.");
    // Back to it: everything it wrote meanwhile, once.
    const live = showLive(s);
    assert.deepEqual(ids(shownMessages(live)), [1, 2, 3, 7]);
    assert.equal(shownMessages(live)[3].content, "New reply text.");
    assert.equal(showLive(live), live);
  });

  test("when the reply ends, the branch looked at becomes the active one (its page from POST …/active)", () => {
    let s = showBranch(running(), 4, through4, false);
    s = fold(s, [ev("done", { message_id: 7 }), ev("turn_end", { status: "completed" })]);
    assert.equal(content(s, 7), "New ");
    const shownBefore = shownMessages(s);
    const t = replaceBranch(s, through4, false);
    assert.equal(t.view, null);
    assert.deepEqual(ids(t.messages), [1, 2, 3, 4]);
    // The rows on screen stay the same objects: nothing is drawn again.
    t.messages.forEach((m, i) => assert.equal(m, shownBefore[i]));
  });

  test("an older page goes above both branches", () => {
    nextId = 0;
    let s = loadHistory(initialState("c"), [row(3, 2), row(4, 3)], true);
    s = fold(s, [
      ev("branched", { turn_id: null, message_id: 7, parent_id: 3, role: "assistant", content: "",
                       attachments: [], versions: versions([4, 7], 7) }),
      ev("turn_start", { user_message_id: 3, continue_message_id: null }),
    ]);
    s = showBranch(s, 4, [row(3, 2), row(4, 3, { versions: versions([4, 7], 4) })], true);
    assert.equal(s.view.hasMore, true);
    s = loadEarlier(s, [row(1, null), row(2, 1)], false);
    assert.deepEqual(ids(s.view.messages), [1, 2, 3, 4]);
    assert.deepEqual(ids(s.messages), [1, 2, 3, 7]);
    assert.equal(s.view.hasMore, false);
  });
});
