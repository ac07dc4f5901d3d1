import { test } from "node:test";
import assert from "node:assert/strict";
import { answerText, questionTrace } from "../../web/js/question-trace.js";

const ITEMS = [
  { key: "db", prompt: "Which database?", kind: "choice", allow_other: true,
    options: [{ value: "pg", label: "PostgreSQL" }, { value: "lite", label: "SQLite" }] },
  { key: "extras", prompt: "Which extras?", kind: "multi",
    options: [{ value: "auth", label: "Sign-in" }, { value: "search", label: "Search" }] },
  { key: "notes", prompt: "Anything else?", kind: "text" },
];
const ARGS = JSON.stringify({ items: ITEMS });

test("an answered question reads as its prompts and the labels chosen, not the values", () => {
  const output = JSON.stringify({ status: "answered", answers: [
    { key: "db", question: "Which database?", answer: "pg" },
    { key: "extras", question: "Which extras?", answer: ["auth", "search"] },
    { key: "notes", question: "Anything else?", answer: "" },
  ] });
  const t = questionTrace(ARGS, output);
  assert.equal(t.status, "answered");
  assert.equal(t.label, "answered");
  assert.deepEqual(t.items.map((e) => [e.prompt, answerText(e)]), [
    ["Which database?", "PostgreSQL"], ["Which extras?", "Sign-in, Search"], ["Anything else?", "(left empty)"]]);
});

test("the person's own words are kept as written and marked as theirs", () => {
  const output = JSON.stringify({ status: "answered", answers: [
    { key: "db", question: "Which database?", answer: "MariaDB", in_their_own_words: true },
    { key: "extras", question: "Which extras?", answer: [] },
  ] });
  const t = questionTrace({ items: ITEMS }, output);
  assert.deepEqual(t.items[0].answers, [{ text: "MariaDB", own: true }]);
  assert.equal(answerText(t.items[1]), "(none)");
});

test("a dismissed question says so, with the questions it asked", () => {
  const output = JSON.stringify({ status: "dismissed", message: "The person dismissed the question without answering." });
  const t = questionTrace(ARGS, output);
  assert.equal(t.status, "dismissed");
  assert.equal(t.label, "dismissed");
  assert.equal(t.note, "You dismissed this question without answering.");
  assert.deepEqual(t.items.map((e) => e.prompt), ["Which database?", "Which extras?", "Anything else?"]);
});

test("stopped, closed and timed-out questions say why no answer came", () => {
  for (const [status, words] of [["stopped", "stopped"], ["interrupted", "closed"], ["no_answer", "in time"]]) {
    const t = questionTrace(ARGS, JSON.stringify({ status, message: "x" }));
    assert.equal(t.label, "not answered");
    assert.match(t.note, new RegExp(words));
  }
});

test("a call still waiting has no trace; a result that is not JSON is shown as its text", () => {
  assert.equal(questionTrace(ARGS, null), null);
  assert.equal(questionTrace(ARGS, ""), null);
  assert.deepEqual(questionTrace("not json", "Numi was closed."), { status: "unknown", label: "no answer", note: "Numi was closed.", items: [] });
});
