// The chat's pane of the model's questions waiting for the person (`ask_user`): one card per
// question (views/question-card.js) in a CardPane; a new one takes the focus unless the
// person is writing.
import { questionCard } from "./question-card.js";
import { CardPane } from "./card-pane.js";

export class QuestionPane extends CardPane {
  /** @param send (questionId, answers) → sent; @param dismiss (questionId) → dismissed unanswered */
  constructor(send, dismiss) {
    super("questions", ({ state }) => state.questions, (q) => q.question_id, (q) => questionCard(q, send, dismiss));
  }

  render(source) {
    const fresh = super.render(source);
    if (!fresh?.length) return fresh;
    // Keyboard first: a new question takes the focus, unless the person is writing something.
    const active = document.activeElement;
    const writing = active && /^(INPUT|TEXTAREA)$/.test(active.tagName) && active.value && !this.el.contains(active);
    if (!writing && !document.querySelector("dialog[open]")) fresh[0].focusFirst();
    return fresh;
  }
}
