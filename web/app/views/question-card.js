// The model asks the person (CONTRACT §7 `question`): one card per question, its items as
// radio buttons (a choice), checkboxes (a multi) or a text box, with "Something else…" and
// its box where the model allows the person's own words. Keyboard first: a digit picks that
// row of the item holding the focus, Enter sends, Esc (or Dismiss) dismisses it unanswered.
// Everything the model wrote goes in as text; the rules are web/js/questions.js.
import { h } from "../dom.js";
import { OTHER, answersOf, digitOf, emptyPicks, pickByDigit, rowCount, typedOther } from "../../js/questions.js";

let cards = 0;

function waitText(seconds) {
  if (seconds >= 120) return `about ${Math.round(seconds / 60)} minutes`;
  return `${seconds} second${seconds === 1 ? "" : "s"}`;
}

/**
 * @param q {{question_id, call_id, items, timeout_s?}}
 * @param send (questionId, answers) → void
 * @param dismiss (questionId) → void
 * @returns the card; `el.unlock(message?)` makes it answerable again and says why (the server
 *   refused the answer); `el.focusFirst()` puts the focus on its first item
 */
export function questionCard(q, send, dismiss) {
  const n = ++cards;
  const items = q.items || [];
  const picks = emptyPicks(items);
  const rows = new Map(); // item key -> {set: el, inputs: [{el, value}], box}

  const error = h("div", { class: "field-error question-error", id: `question-err-${n}`, role: "alert" });
  const item = (it, i) => {
    const legendId = `question-${n}-${i}`;
    const inputs = [];
    const set = h("fieldset", { class: "question-item", dataset: { key: it.key, kind: it.kind }, "aria-describedby": error.id },
      h("legend", { id: legendId }, it.prompt));
    if (it.kind === "text") {
      const box = h("textarea", { class: "question-text", rows: 2, "aria-labelledby": legendId,
                                  oninput: () => { picks[it.key] = typedOther(it, picks[it.key], box.value); } });
      set.append(box, h("div", { class: "hint" }, "Shift+Enter for a new line"));
      rows.set(it.key, { set, inputs, box });
      return set;
    }
    const type = it.kind === "choice" ? "radio" : "checkbox";
    const name = `question-${n}-${i}-pick`;
    const row = (value, label, digit) => {
      const input = h("input", { type, name, value: value === OTHER ? "" : value,
                                 onchange: () => { picks[it.key] = readPick(it, inputs, picks[it.key]); } });
      inputs.push({ el: input, value });
      // The digit that picks the row, shown beside it (hidden from screen readers: the
      // hint below says how the keys work once).
      return h("label", { class: "question-option" }, input,
        digit <= 9 ? h("kbd", { "aria-hidden": "true" }, String(digit)) : null, h("span", {}, label));
    };
    const options = h("div", { class: "question-options" });
    (it.options || []).forEach((o, k) => options.append(row(o.value, o.label, k + 1)));
    let box = null;
    if (it.allow_other) {
      options.append(row(OTHER, "Something else…", (it.options || []).length + 1));
      box = h("input", { type: "text", class: "question-other", "aria-label": `Your own answer to: ${it.prompt}`,
                         placeholder: "In your own words",
                         oninput: () => {
                           picks[it.key] = typedOther(it, picks[it.key], box.value);
                           show(it.key);
                         } });
      options.append(box);
    }
    set.append(options);
    rows.set(it.key, { set, inputs, box });
    return set;
  };

  /** The item's pick as its inputs say (what the person clicked or arrowed to). */
  const readPick = (it, inputs, pick) => {
    const on = inputs.filter((x) => x.el.checked).map((x) => x.value);
    return it.kind === "choice" ? { ...pick, choice: on[0] ?? null } : { ...pick, checked: on };
  };
  /** Set the item's inputs to its pick. */
  const show = (key) => {
    const pick = picks[key];
    for (const x of rows.get(key).inputs) {
      x.el.checked = pick.choice === x.value || pick.checked.includes(x.value);
    }
  };

  const submit = () => {
    const result = answersOf(items, picks);
    if (result.error) {
      error.textContent = result.error;
      const r = rows.get(result.key);
      (r.box && picks[result.key].choice === OTHER ? r.box : r.inputs[0]?.el || r.box)?.focus();
      return;
    }
    error.textContent = "";
    lock(true);
    send(q.question_id, result.answers);
  };
  const drop = () => { lock(true); dismiss(q.question_id); };

  const sendBtn = h("button", { type: "button", class: "primary", onclick: submit }, "Send answers");
  const dismissBtn = h("button", { type: "button", class: "ghost", onclick: drop }, "Dismiss");
  const lock = (on) => {
    sendBtn.disabled = dismissBtn.disabled = on;
    for (const { set } of rows.values()) set.disabled = on;
    card.toggleAttribute("aria-busy", on);
  };

  const sets = items.map(item);
  const digits = items.some((it) => rowCount(it) > 0);
  const title = items.length > 1 ? `The model asks you ${items.length} questions` : "The model asks you";
  // Announced on insertion, as an approval is: the reply waits for the person.
  const card = h("section", { class: "question-card", role: "group", "aria-label": title, dataset: { questionId: q.question_id } },
    h("div", { class: "question-title", role: "alert" }, title),
    ...sets,
    error,
    h("p", { class: "hint question-keys" },
      digits ? "Digits pick an option of the question you are in · Enter sends · Esc dismisses" : "Enter sends · Esc dismisses"),
    Number.isInteger(q.timeout_s)
      ? h("p", { class: "hint question-limit" }, `Unanswered, the model goes on in ${waitText(q.timeout_s)} (your limit in Settings).`)
      : null,
    h("div", { class: "question-buttons" }, sendBtn, dismissBtn));

  // An answer being changed: the last refusal no longer describes it.
  card.addEventListener("input", () => { error.textContent = ""; });
  card.addEventListener("keydown", (e) => {
    if (card.hasAttribute("aria-busy")) return;
    const inBox = e.target.tagName === "TEXTAREA" || (e.target.tagName === "INPUT" && e.target.type === "text");
    if (e.key === "Escape") {
      // Here Esc dismisses the question; it must not also stop the reply (shortcuts.js).
      e.preventDefault();
      drop();
    } else if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey && e.target.tagName !== "BUTTON") {
      e.preventDefault();
      submit();
    } else if (!inBox && digitOf(e)) {
      const set = e.target.closest?.("fieldset") || sets[0];
      const it = items.find((x) => x.key === set?.dataset.key);
      const next = it && pickByDigit(it, picks[it.key], digitOf(e));
      if (!next) return;
      e.preventDefault();
      error.textContent = "";
      picks[it.key] = next.pick;
      show(it.key);
      const r = rows.get(it.key);
      if (next.other) r.box?.focus();
      else r.inputs[digitOf(e) - 1]?.el.focus();
    }
  });

  card.unlock = (message) => {
    lock(false);
    if (message) error.textContent = message;
  };
  card.focusFirst = () => {
    const first = rows.get(items[0]?.key);
    (first?.inputs[0]?.el || first?.box)?.focus();
  };
  return card;
}
