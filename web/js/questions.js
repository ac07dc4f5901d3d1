// What a question card holds and sends (CONTRACT §7 `question` / `answer`), as pure rules:
// the picks per item, what a digit key does, and the answers an `answer` frame carries;
// and the questions waiting in the chat's state (`questionEvents`, registered into the
// fold by web/js/reducer.js). No DOM: the card (web/app/views/question-card.js) reads and writes its inputs through
// these, and tests/js/questions.test.mjs runs them under node.
//
// A pick is per item: `{choice, checked, other}` — `choice` the picked option's value (a
// choice item; OTHER for "something else"), `checked` the ticked values (a multi item;
// OTHER among them for "something else"), `other` what was written in the box (or in a
// text item). Written words win over the pick they sit beside: typing in the box picks it.

import { STREAMING, NEW_EPOCH, findCallOwner } from "./chat-state.js";

/** The value "Something else…" stands for in a pick (never sent: its text is). */
export const OTHER = "\u0000other";

/** A pick with nothing chosen yet, for each item. */
export function emptyPicks(items) {
  const picks = {};
  for (const item of items) picks[item.key] = { choice: null, checked: [], other: "" };
  return picks;
}

/** The number of digit-pickable rows of an item: its options, then "Something else…". */
export function rowCount(item) {
  if (item.kind === "text") return 0;
  return (item.options || []).length + (item.allow_other ? 1 : 0);
}

/**
 * A key press as the digit 1–9 it picks, or 0 when it is none (modifier keys held, another key).
 * @param e {{key, ctrlKey?, metaKey?, altKey?}}
 */
export function digitOf(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return 0;
  return /^[1-9]$/.test(e.key) ? Number(e.key) : 0;
}

/**
 * What digit `n` does to `item`'s pick: choose option n (a choice), tick or untick it (a
 * multi); the row after the options is "Something else…", and picking it asks for its box.
 * @returns {{pick, other: boolean}} the new pick and whether to focus the box; null when
 *   the digit names no row (a text item, a number past the last row)
 */
export function pickByDigit(item, pick, n) {
  const rows = rowCount(item);
  if (!rows || n < 1 || n > rows) return null;
  const options = item.options || [];
  const value = n <= options.length ? options[n - 1].value : OTHER;
  if (item.kind === "choice") return { pick: { ...pick, choice: value }, other: value === OTHER };
  const on = pick.checked.includes(value);
  const checked = on ? pick.checked.filter((v) => v !== value) : [...pick.checked, value];
  return { pick: { ...pick, checked }, other: value === OTHER && !on };
}

/** The pick after the box beside "Something else…" was typed in: text there picks the box. */
export function typedOther(item, pick, text) {
  const next = { ...pick, other: text };
  if (!text.trim() || item.kind === "text") return next;
  if (item.kind === "choice") return { ...next, choice: OTHER };
  return pick.checked.includes(OTHER) ? next : { ...next, checked: [...pick.checked, OTHER] };
}

function quoted(text, limit = 80) {
  return `\u201c${text.length <= limit ? text : `${text.slice(0, limit - 1)}\u2026`}\u201d`;
}

/**
 * The `answers` of an `answer` frame, `{key: text | [texts]}`, or the first item that cannot
 * be sent yet: `{error, key}` with a sentence saying what to do. A choice needs an option or
 * written words; "Something else…" with an empty box counts as not picked; a multi may pick
 * none; a text item may stay empty.
 */
export function answersOf(items, picks) {
  const answers = {};
  for (const item of items) {
    const pick = picks[item.key] || { choice: null, checked: [], other: "" };
    const other = pick.other.trim();
    if (item.kind === "text") {
      answers[item.key] = other;
    } else if (item.kind === "multi") {
      // In the options' order, as the card lists them; the written words last.
      const values = (item.options || []).map((o) => o.value).filter((v) => pick.checked.includes(v));
      if (item.allow_other && pick.checked.includes(OTHER) && other) values.push(other);
      answers[item.key] = values;
    } else if (pick.choice === OTHER && item.allow_other) {
      if (!other) return { key: item.key, error: `Write your answer to ${quoted(item.prompt)}, or pick one of its options.` };
      answers[item.key] = other;
    } else if (pick.choice != null && pick.choice !== OTHER) {
      answers[item.key] = pick.choice;
    } else {
      return { key: item.key, error: `Pick an answer to ${quoted(item.prompt)}.` };
    }
  }
  return { answers };
}

// --- the questions waiting for the person ----------------------------------------------

// The state's slice: questions of the running turn waiting for the person (`question`):
// {question_id, call_id, items, timeout_s?}; each goes with its call's tool_end, or the turn's end.
export const questionSlices = { questions: [] };

const noQuestions = (state) => (state.questions.length ? { ...state, questions: [] } : state);

export const questionEvents = {
  /**
   * The model asks the person (CONTRACT §7). A question is sent again, with a new id, to a
   * socket that resumes: one already shown stays as it is. One whose call has ended (its
   * tool_end came first) is no longer waiting.
   */
  question(state, e) {
    if (state.questions.some((q) => q.question_id === e.question_id)) return state;
    const owner = findCallOwner(state, e.call_id);
    if (owner?.toolCalls.find((c) => c.id === e.call_id)?.state === "done") return state;
    const q = { question_id: e.question_id, call_id: e.call_id, items: e.items || [] };
    if (Number.isInteger(e.timeout_s)) q.timeout_s = e.timeout_s;
    return { ...state, questions: [...state.questions, q] };
  },

  tool_end(state, e) {
    if (!state.questions.some((q) => q.call_id === e.call_id)) return state;
    return { ...state, questions: state.questions.filter((q) => q.call_id !== e.call_id) };
  },

  // A new turn, the turn's end, a snapshot of a turn that no longer runs, a server
  // restart: no question waits any more.
  turn_start: noQuestions,
  turn_end: noQuestions,
  snapshot: (state, e) => (e.status === STREAMING ? state : noQuestions(state)),
  [NEW_EPOCH]: noQuestions,
};
