// What an answered (or unanswered) `ask_user` call leaves in the thread: each question with
// the labels the person chose, in words, read from the call's arguments (the options'
// value → label) and its result (backend/features/questions/items.py: `answered` lists each
// question's answer by value; otherwise a status and a sentence). Pure: no DOM, tested in
// tests/js/question-trace.test.mjs.

// What a question that got no answers says, by the result's status.
const UNANSWERED = {
  dismissed: "You dismissed this question without answering.",
  stopped: "The reply was stopped before you answered.",
  interrupted: "Numi was closed before you answered.",
  no_answer: "Not answered in time: the model went on without it.",
};

function parsed(value) {
  if (value && typeof value === "object") return value;
  if (typeof value !== "string" || !value) return null;
  try { return JSON.parse(value); } catch { return null; }
}

/** The text of an answer value: its option's label, else the person's own words. */
function labelOf(item, value) {
  const option = (item?.options || []).find((o) => o && o.value === value);
  return option ? { text: String(option.label ?? option.value), own: false } : { text: String(value), own: true };
}

/**
 * An `ask_user` call read for the thread, or null while it waits (no result yet).
 * @param args the call's arguments (`{items}` as JSON text or an object)
 * @param output the call's result text
 * @returns {{status: "answered"|"dismissed"|"stopped"|"interrupted"|"no_answer"|"unknown", label: string,
 *   note: string, items: [{prompt: string, kind: string, answers: [{text, own}]}]}}
 */
export function questionTrace(args, output) {
  const result = parsed(output);
  if (!result) return output == null || output === "" ? null : { status: "unknown", label: "no answer", note: String(output), items: [] };
  const asked = (parsed(args)?.items || []).filter((it) => it && typeof it === "object");
  const byKey = new Map(asked.map((it) => [it.key, it]));
  if (result.status === "answered") {
    const items = (Array.isArray(result.answers) ? result.answers : []).map((a) => {
      const item = byKey.get(a.key);
      const given = Array.isArray(a.answer) ? a.answer : [a.answer];
      const answers = given.filter((v) => v != null && String(v).trim() !== "").map((v) => labelOf(item, v));
      return { prompt: String(a.question ?? item?.prompt ?? a.key ?? ""), kind: item?.kind || "choice", answers };
    });
    return { status: "answered", label: "answered", note: "", items };
  }
  const items = asked.map((it) => ({ prompt: String(it.prompt ?? it.key ?? ""), kind: it.kind || "choice", answers: [] }));
  const status = result.status in UNANSWERED ? result.status : "unknown";
  const note = UNANSWERED[status] || String(result.message || "No answer came.");
  return { status, label: status === "dismissed" ? "dismissed" : "not answered", note, items };
}

/** An entry's answers in words: "PostgreSQL", "Sign-in, Search", or "(none)" / "(left empty)". */
export function answerText(entry) {
  if (!entry.answers.length) return entry.kind === "text" ? "(left empty)" : "(none)";
  return entry.answers.map((a) => a.text).join(", ");
}
