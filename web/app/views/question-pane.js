// The chat's pane of the model's questions waiting for the person (`ask_user`): one card per
// question (views/question-card.js); a new one takes the focus unless the person is writing.
import { h } from "../dom.js";
import { questionCard } from "./question-card.js";
import { Inputs } from "../../js/view-inputs.js";

export class QuestionPane {
  /** @param send (questionId, answers) → sent; @param dismiss (questionId) → dismissed unanswered */
  constructor(send, dismiss) {
    this.send = send;
    this.dismiss = dismiss;
    this.el = h("div", { class: "questions" });
    this.cards = new Map();
    this.key = "";
    this.notice = null;
    this.inputs = new Inputs({
      questions: ({ state }) => state.questions,
      notice: ({ state }) => state.notice,
    });
  }

  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return;
    // A refused answer (an `error` while the card is up) makes it answerable again, saying why.
    if (inp.notice !== this.notice) {
      this.notice = inp.notice;
      if (inp.notice?.kind === "error") for (const card of this.cards.values()) card.unlock(inp.notice.message);
    }
    const key = inp.questions.map((q) => q.question_id).join();
    if (key === this.key) return;
    this.key = key;
    const cards = new Map();
    let fresh = null;
    for (const q of inp.questions) {
      let card = this.cards.get(q.question_id);
      if (!card) {
        card = questionCard(q, this.send, this.dismiss);
        fresh ??= card;
      }
      cards.set(q.question_id, card);
    }
    this.cards = cards;
    this.el.replaceChildren(...cards.values());
    // Keyboard first: a new question takes the focus, unless the person is writing something.
    const active = document.activeElement;
    const writing = active && /^(INPUT|TEXTAREA)$/.test(active.tagName) && active.value && !this.el.contains(active);
    if (fresh && !writing && !document.querySelector("dialog[open]")) fresh.focusFirst();
  }
}
