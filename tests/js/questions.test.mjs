// Questions (CONTRACT §7): the card's pure rules (web/js/questions.js: digit keys, the box
// beside "Something else…", the answers sent) and the reducer's pending questions
// (web/js/reducer.js: one card per question, gone with its call's tool_end or the turn).
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { OTHER, answersOf, digitOf, emptyPicks, pickByDigit, rowCount, typedOther } from "../../web/js/questions.js";
import { initialState, applyEvent } from "../../web/js/reducer.js";
import { deepFreeze } from "./freeze.mjs";

const DB = { key: "db", prompt: "Which database?", kind: "choice", allow_other: true,
             options: [{ value: "pg", label: "PostgreSQL" }, { value: "lite", label: "SQLite" }] };
const EXTRAS = { key: "extras", prompt: "Which extras?", kind: "multi", allow_other: false,
                 options: [{ value: "auth", label: "Sign-in" }, { value: "search", label: "Search" }] };
const NOTES = { key: "notes", prompt: "Anything else?", kind: "text", options: [], allow_other: false };
const ITEMS = deepFreeze([DB, EXTRAS, NOTES]);

describe("digit keys", () => {
  test("a digit is 1 to 9 with no modifier held", () => {
    assert.equal(digitOf({ key: "3" }), 3);
    assert.equal(digitOf({ key: "0" }), 0);
    assert.equal(digitOf({ key: "a" }), 0);
    assert.equal(digitOf({ key: "2", ctrlKey: true }), 0);
    assert.equal(digitOf({ key: "2", altKey: true }), 0);
    assert.equal(digitOf({ key: "12" }), 0);
  });

  test("a choice: the digit picks that option; the row after them is Something else", () => {
    const pick = deepFreeze(emptyPicks(ITEMS).db);
    assert.equal(rowCount(DB), 3);
    assert.deepEqual(pickByDigit(DB, pick, 2), { pick: { choice: "lite", checked: [], other: "" }, other: false });
    assert.deepEqual(pickByDigit(DB, pick, 3), { pick: { choice: OTHER, checked: [], other: "" }, other: true });
    assert.equal(pickByDigit(DB, pick, 4), null, "no fourth row");
    assert.equal(pickByDigit({ ...DB, allow_other: false }, pick, 3), null, "no Something else row");
  });

  test("a multi: the digit ticks, and ticks off again", () => {
    let pick = deepFreeze(emptyPicks(ITEMS).extras);
    pick = deepFreeze(pickByDigit(EXTRAS, pick, 2).pick);
    pick = deepFreeze(pickByDigit(EXTRAS, pick, 1).pick);
    assert.deepEqual(pick.checked, ["search", "auth"]);
    pick = pickByDigit(EXTRAS, pick, 2).pick;
    assert.deepEqual(pick.checked, ["auth"]);
  });

  test("a multi's Something else asks for its box only when ticked on", () => {
    const item = { ...EXTRAS, allow_other: true };
    const on = pickByDigit(item, emptyPicks([item]).extras, 3);
    assert.equal(on.other, true);
    assert.equal(pickByDigit(item, on.pick, 3).other, false);
  });

  test("a text item has no rows to pick", () => {
    assert.equal(rowCount(NOTES), 0);
    assert.equal(pickByDigit(NOTES, emptyPicks(ITEMS).notes, 1), null);
  });
});

describe("the box beside Something else", () => {
  test("writing in it picks it (the typing is what was meant); clearing it leaves the pick", () => {
    const picked = { choice: "pg", checked: [], other: "" };
    const typed = typedOther(DB, picked, "MariaDB");
    assert.deepEqual(typed, { choice: OTHER, checked: [], other: "MariaDB" });
    assert.deepEqual(typedOther(DB, picked, "  "), { ...picked, other: "  " });
    const multi = { ...EXTRAS, allow_other: true };
    const ticked = typedOther(multi, { choice: null, checked: ["auth"], other: "" }, "billing");
    assert.deepEqual(ticked.checked, ["auth", OTHER]);
    assert.deepEqual(typedOther(multi, ticked, "billing too").checked, ["auth", OTHER], "ticked once");
  });
});

describe("the answers sent", () => {
  test("each item as the server wants it: a choice's value, a multi's list, a text", () => {
    const picks = emptyPicks(ITEMS);
    picks.db = { choice: "pg", checked: [], other: "" };
    picks.extras = { choice: null, checked: ["search", "auth"], other: "" };
    picks.notes = { choice: null, checked: [], other: "  keep it small " };
    assert.deepEqual(answersOf(ITEMS, picks), { answers: { db: "pg", extras: ["auth", "search"], notes: "keep it small" } });
  });

  test("Something else sends the words written, never the marker", () => {
    const picks = emptyPicks(ITEMS);
    picks.db = { choice: OTHER, checked: [], other: " MariaDB " };
    const { answers } = answersOf(ITEMS, picks);
    assert.equal(answers.db, "MariaDB");
    const multi = { ...EXTRAS, allow_other: true };
    assert.deepEqual(answersOf([multi], { extras: { choice: null, checked: ["auth", OTHER], other: "billing" } }).answers,
      { extras: ["auth", "billing"] });
    // Ticked with nothing written: as if not ticked.
    assert.deepEqual(answersOf([multi], { extras: { choice: null, checked: [OTHER], other: " " } }).answers,
      { extras: [] });
  });

  test("a choice needs an answer: the sentence names the question", () => {
    assert.deepEqual(answersOf(ITEMS, emptyPicks(ITEMS)),
      { key: "db", error: "Pick an answer to \u201cWhich database?\u201d." });
    const picks = emptyPicks(ITEMS);
    picks.db = { choice: OTHER, checked: [], other: "" };
    assert.match(answersOf(ITEMS, picks).error, /^Write your answer to \u201cWhich database\?\u201d, or pick/);
  });

  test("an empty multi and an empty text are answers too", () => {
    const picks = emptyPicks(ITEMS);
    picks.db = { choice: "lite", checked: [], other: "" };
    assert.deepEqual(answersOf(ITEMS, picks).answers, { db: "lite", extras: [], notes: "" });
  });
});

describe("pending questions in the reducer", () => {
  const E = "e1";
  const T = "t_1";
  let id = 0;
  const ev = (type, fields = {}) => ({ type, event_id: ++id, turn_id: T, epoch: E, ...fields });
  const fold = (state, events) => events.reduce((s, e) => applyEvent(deepFreeze(s), deepFreeze(e)), state);
  const question = (qid = "q_1", fields = {}) => ev("question", { question_id: qid, call_id: "c1", items: ITEMS, ...fields });
  const asking = () => [
    ev("turn_start", { user_message_id: 1, continue_message_id: null }),
    ev("tool_preparing", { call_id: "c1", name: "ask_user", message_id: 2 }),
    ev("tool_start", { call_id: "c1", name: "ask_user", arguments: "{}", message_id: 2 }),
  ];

  test("a question waits until its call's tool_end; a re-sent one adds no second card", () => {
    let s = fold(initialState("c"), [...asking(), question("q_1", { timeout_s: 60 })]);
    assert.deepEqual(s.questions, [{ question_id: "q_1", call_id: "c1", items: ITEMS, timeout_s: 60 }]);
    const again = applyEvent(s, question("q_1"));
    assert.equal(again.questions, s.questions, "the same question, sent again on resume");
    s = fold(s, [ev("tool_end", { call_id: "c1", name: "ask_user", ok: true, output: "{}", duration_ms: 9 })]);
    assert.deepEqual(s.questions, []);
    // A question whose call already ended is not waiting (never drawn again).
    assert.deepEqual(applyEvent(s, question("q_late")).questions, []);
  });

  test("the turn's end, a new turn or a new server take every card away", () => {
    const s = fold(initialState("c"), [...asking(), question("q_2")]);
    assert.equal(s.questions.length, 1);
    assert.deepEqual(applyEvent(s, ev("turn_end", { status: "cancelled" })).questions, []);
    assert.deepEqual(applyEvent(s, { ...ev("turn_start", { user_message_id: 5, continue_message_id: null }), turn_id: "t_2" }).questions, []);
    assert.deepEqual(applyEvent(s, { type: "title_update", event_id: 1, turn_id: null, epoch: "e2", title: "x" }).questions, []);
  });
});
