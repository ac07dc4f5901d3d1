// The chat list's date groups (web/js/date-groups.js) with a fixed "now" and time zone.
// Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { dateGroup, dayStamp, groupByDate } from "../../web/js/date-groups.js";

const at = (iso) => Date.parse(iso);
const utc = () => 0;
const tokyo = () => 9 * 60;      // UTC+9
const newYork = () => -5 * 60;   // UTC−5
const label = (iso, now, offsetOf = utc) => dateGroup(at(iso), at(now), offsetOf).label;
const chat = (id, updated_at) => ({ id, updated_at });
const shape = (groups) => groups.map((g) => [g.label, g.chats.map((c) => c.id)]);

test("day boundaries are the person's local midnight", () => {
  const now = "2026-12-02T10:00:00.000Z";
  assert.equal(label("2026-12-02T00:00:00.000Z", now), "Today");
  assert.equal(label("2026-12-01T23:59:59.999Z", now), "Yesterday");
  assert.equal(label("2026-12-01T00:00:00.000Z", now), "Yesterday");
  assert.equal(label("2026-11-30T23:59:59.999Z", now), "Previous 7 days");
  assert.equal(label("2026-11-25T00:00:00.000Z", now), "Previous 7 days"); // 7 days ago
  assert.equal(label("2026-11-24T23:59:59.000Z", now), "Previous 30 days");
  assert.equal(label("2026-11-02T00:00:00.000Z", now), "Previous 30 days"); // 30 days ago
  assert.equal(label("2026-11-01T23:00:00.000Z", now), "November 2026");
});

test("the same instant falls on different days in different zones", () => {
  // 23:30 UTC on 1 December: still 1 December in New York, already 2 December in Tokyo.
  const now = "2026-12-01T23:30:00.000Z";
  const chatTime = "2026-12-01T14:30:00.000Z"; // 23:30 in Tokyo on the 1st, 09:30 in New York
  assert.equal(label(chatTime, now, tokyo), "Yesterday");
  assert.equal(label(chatTime, now, newYork), "Today");
  assert.equal(label(chatTime, now, utc), "Today");
});

test("an offset that changes with the date (daylight saving) is read per instant", () => {
  // Summer time +2 until 25 Oct 01:00 UTC, then +1: each time is placed by its own offset.
  const cet = (ms) => (ms < at("2026-10-25T01:00:00.000Z") ? 120 : 60);
  const now = "2026-10-25T23:30:00.000Z"; // 00:30 on the 26th locally (+1)
  assert.equal(label("2026-10-25T23:00:00.000Z", now, cet), "Today");     // 00:00 on the 26th
  assert.equal(label("2026-10-25T22:59:00.000Z", now, cet), "Yesterday"); // 23:59 on the 25th
  assert.equal(label("2026-10-24T22:30:00.000Z", now, cet), "Yesterday");       // 00:30 on the 25th at +2
  assert.equal(label("2026-10-24T21:59:00.000Z", now, cet), "Previous 7 days"); // 23:59 on the 24th at +2
});

test("older chats go by month, with the year; a year change keeps months in order", () => {
  const now = "2027-01-05T12:00:00.000Z";
  assert.equal(label("2026-12-31T23:00:00.000Z", now), "Previous 7 days");
  assert.equal(label("2026-12-01T08:00:00.000Z", now), "December 2026");
  assert.equal(label("2026-11-30T08:00:00.000Z", now), "November 2026");
  assert.equal(label("2025-11-30T08:00:00.000Z", now), "November 2025");
  const groups = groupByDate([
    chat("a", "2027-01-05T09:00:00.000Z"), chat("b", "2027-01-04T09:00:00.000Z"),
    chat("c", "2026-12-20T09:00:00.000Z"), chat("d", "2026-11-10T09:00:00.000Z"),
    chat("e", "2026-11-02T09:00:00.000Z"), chat("f", "2025-12-24T09:00:00.000Z"),
    chat("g", "2024-03-01T09:00:00.000Z"),
  ], { now: at(now), offsetOf: utc });
  assert.deepEqual(shape(groups), [
    ["Today", ["a"]], ["Yesterday", ["b"]], ["Previous 30 days", ["c"]],
    ["November 2026", ["d", "e"]], ["December 2025", ["f"]], ["March 2024", ["g"]],
  ]);
});

test("month boundaries follow the local zone too", () => {
  const now = "2027-03-15T12:00:00.000Z";
  // 31 Jan 20:00 UTC is 1 February in Tokyo.
  assert.equal(label("2027-01-31T20:00:00.000Z", now, utc), "January 2027");
  assert.equal(label("2027-01-31T20:00:00.000Z", now, tokyo), "February 2027");
  // 1 Feb 03:00 UTC is still 31 January in New York.
  assert.equal(label("2027-02-01T03:00:00.000Z", now, newYork), "January 2027");
});

test("a page appended (or a chat moved up by a frame) never makes a second header", () => {
  const now = at("2026-12-02T10:00:00.000Z");
  const first = [chat("a", "2026-12-02T09:00:00.000Z"), chat("b", "2026-11-20T09:00:00.000Z")];
  const older = [chat("c", "2026-11-19T09:00:00.000Z"), chat("d", "2026-10-01T09:00:00.000Z")];
  const moved = [chat("d2", "2026-10-03T09:00:00.000Z"), ...first, chat("x", "2026-12-02T08:00:00.000Z"), ...older];
  for (const list of [first.concat(older), moved]) {
    const labels = groupByDate(list, { now, offsetOf: utc }).map((g) => g.label);
    assert.equal(new Set(labels).size, labels.length, `one header each: ${labels}`);
  }
  assert.deepEqual(shape(groupByDate(moved, { now, offsetOf: utc })), [
    ["Today", ["a", "x"]], ["Previous 30 days", ["b", "c"]], ["October 2026", ["d2", "d"]],
  ]);
});

test("a time ahead of this clock is today; an unreadable one does not throw", () => {
  const now = "2026-12-02T10:00:00.000Z";
  assert.equal(label("2026-12-03T10:00:00.000Z", now), "Today");
  assert.deepEqual(shape(groupByDate([chat("z", "not a time")], { now: at(now), offsetOf: utc })), [["Today", ["z"]]]);
  assert.deepEqual(groupByDate([], { now: at(now) }), []);
});

test("the day stamp changes at local midnight", () => {
  assert.equal(dayStamp(at("2026-12-01T14:59:59.000Z"), tokyo) + 1, dayStamp(at("2026-12-01T15:00:00.000Z"), tokyo));
  assert.equal(dayStamp(at("2026-12-01T14:59:59.000Z"), utc), dayStamp(at("2026-12-01T15:00:00.000Z"), utc));
});
