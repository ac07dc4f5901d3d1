// The chat list's live rules (web/js/chat-list.js): frames of /ws/_app applied to the
// list the sidebar draws. Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { applyChatFrame, appendPage, byActivity, readIfOpen } from "../../web/js/chat-list.js";

const chat = (id, minute, extra = {}) => ({
  id, title: id.toUpperCase(), model_id: null, folder_id: null, pinned: false, archived: false, temporary: false,
  created_at: "2026-11-29T10:00:00.000Z", updated_at: `2026-11-29T10:${String(minute).padStart(2, "0")}:00.000Z`,
  running: false, unread: false, ...extra,
});
const changed = (c) => ({ type: "chat_changed", chat: c });
const ids = (list) => list.map((c) => c.id);
const list = Object.freeze([chat("c_c", 30), chat("c_b", 20), chat("c_a", 10)]);

test("a change in place keeps the order and marks running, then unread", () => {
  const running = applyChatFrame(list, changed(chat("c_b", 20, { running: true })));
  assert.deepEqual(ids(running), ["c_c", "c_b", "c_a"]);
  assert.equal(running[1].running, true);
  assert.equal(list[1].running, false, "the old list is not touched");
  const done = applyChatFrame(running, changed(chat("c_b", 20, { unread: true })));
  assert.deepEqual([done[1].running, done[1].unread], [false, true]);
});

test("newer activity moves a chat to the top; a new chat is inserted by its time", () => {
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_a", 40)))), ["c_a", "c_c", "c_b"]);
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_n", 25)))), ["c_c", "c_n", "c_b", "c_a"]);
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_n", 5)))), ["c_c", "c_b", "c_a", "c_n"]);
  // Same time: the larger id first, as the server orders.
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_d", 30)))), ["c_d", "c_c", "c_b", "c_a"]);
});

test("a chat older than every loaded one waits for its page when more pages exist", () => {
  assert.equal(applyChatFrame(list, changed(chat("c_old", 1)), { more: true }), list);
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_new", 50)), { more: true }))[0], "c_new");
  // A listed chat is updated even when it is the last one loaded.
  assert.equal(applyChatFrame(list, changed(chat("c_a", 10, { unread: true })), { more: true })[2].unread, true);
});

test("removed, archived and temporary chats leave the list; unknown ones change nothing", () => {
  assert.deepEqual(ids(applyChatFrame(list, { type: "chat_removed", chat_id: "c_b" })), ["c_c", "c_a"]);
  assert.equal(applyChatFrame(list, { type: "chat_removed", chat_id: "c_x" }), list);
  assert.deepEqual(ids(applyChatFrame(list, changed(chat("c_c", 30, { archived: true })))), ["c_b", "c_a"]);
  assert.equal(applyChatFrame(list, changed(chat("c_t", 59, { temporary: true }))), list);
  assert.equal(applyChatFrame(list, { type: "resync" }), list);
});

test("an unchanged row returns the same list, so nothing redraws", () => {
  assert.equal(applyChatFrame(list, changed(chat("c_b", 20))), list);
});

test("the open chat is never marked unread", () => {
  const next = applyChatFrame(list, changed(chat("c_b", 20, { unread: true })), { openId: "c_b" });
  assert.equal(next, list);
  assert.deepEqual(readIfOpen(chat("c_b", 1, { unread: true }), "c_b").unread, false);
  assert.deepEqual(readIfOpen(chat("c_b", 1, { unread: true }), "c_a").unread, true);
});

test("frames re-applied after a list read end at the newest state", () => {
  // The read answered with c_b running; the frames of that start and of its end came meanwhile.
  const read = [chat("c_b", 20, { running: true }), chat("c_a", 10)];
  const frames = [changed(chat("c_b", 20, { running: true })), changed(chat("c_b", 25, { unread: true }))];
  const after = frames.reduce((l, f) => applyChatFrame(l, f), read);
  assert.deepEqual([after[0].id, after[0].running, after[0].unread], ["c_b", false, true]);
});

test("an older page never duplicates a chat a frame moved up meanwhile; order helper is total", () => {
  const moved = applyChatFrame(list, changed(chat("c_z", 45)), { more: true });
  const appended = appendPage(moved, [chat("c_z", 1), chat("c_y", 2)]);
  assert.deepEqual(ids(appended), ["c_z", "c_c", "c_b", "c_a", "c_y"]);
  assert.equal(appended[0].updated_at, chat("c_z", 45).updated_at);
  assert.equal(byActivity(chat("c_a", 1), chat("c_a", 1)), 0);
});
