// "Memory saved · Undo" under a reply whose turn saved a memory with `remember` (CONTRACT §8):
// the fact as text, and Undo — DELETE for a memory the turn added, or a PATCH back to the text
// an updated memory had (the event's `previous_text`); without that text, "Open Memory" leads to
// Settings → Memory instead. The chips come from the chat's state (web/js/memory.js); what an
// Undo did is kept here for the page's life, so a bubble drawn again still says it.
import { h } from "../dom.js";
import { api } from "../api.js";
import { chipLabel, undoPlan, undoneSentence } from "../../js/memory.js";
import { memoryLink } from "./memory-link.js";

// `${turnId} ${memoryId}` → "removed" | "restored" | "gone": Undo runs once.
const undone = new Map();

const keyOf = (chip) => `${chip.turnId} ${chip.memoryId}`;

/** The chips under one reply; one element kept across frames, drawn again only when they change. */
export class MemoryChips {
  constructor() {
    this.el = h("div", { class: "memory-chips" });
    this.shown = null;
  }

  /** Brought up to date with `chips` (the reply's, from chipsByReply); returns its element. */
  element(chips) {
    // chipsByReply makes new lists each frame: compare what they say, so a focused Undo stays.
    const key = JSON.stringify(chips.map((c) => [keyOf(c), c.text, c.updated, c.previousText]));
    if (key !== this.shown) {
      this.shown = key;
      this.el.replaceChildren(...chips.map((c) => this._chip(c)));
    }
    return this.el;
  }

  _chip(chip) {
    const said = h("span", { class: "memory-chip-said", role: "status" });
    const row = h("div", { class: "memory-chip", dataset: { memory: chip.memoryId } },
      h("strong", { class: "memory-chip-label" }, chipLabel(chip)),
      h("span", { class: "memory-chip-text", title: chip.text }, chip.text),
      said);
    const outcome = undone.get(keyOf(chip));
    if (outcome) {
      row.classList.add("undone");
      said.textContent = undoneSentence(outcome);
      return row;
    }
    const plan = undoPlan(chip);
    if (!plan) {
      row.append(memoryLink(chip.memoryId, "Open Memory", { class: "memory-chip-open",
        "aria-label": "Open Memory to change or delete it" }));
      return row;
    }
    const undo = h("button", { type: "button", class: "ghost memory-chip-undo",
      "aria-label": chip.updated ? "Undo: put the memory back as it was" : "Undo: forget this memory",
      onclick: async () => {
        undo.disabled = true;
        said.textContent = "";
        try {
          await api(plan.method, plan.path, plan.body);
          this._done(chip, row, undo, said, plan.method === "DELETE" ? "removed" : "restored");
        } catch (err) {
          if (err.status === 404) { this._done(chip, row, undo, said, "gone"); return; }
          undo.disabled = false;
          said.textContent = err.message;
        }
      } }, "Undo");
    row.append(undo);
    return row;
  }

  _done(chip, row, undo, said, outcome) {
    undone.set(keyOf(chip), outcome);
    row.classList.add("undone");
    undo.remove();
    said.textContent = undoneSentence(outcome);
  }
}
