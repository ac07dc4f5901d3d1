// The chat's pane of tool calls waiting for the person's decision: one card per approval
// (views/approval.js), kept while it waits so an edit in progress stays.
import { h } from "../dom.js";
import { approvalCard } from "./approval.js";
import { Inputs } from "../../js/view-inputs.js";

export class ApprovalPane {
  /** @param answer (approvalId, decision, reason, args) → the decision sent */
  constructor(answer) {
    this.answer = answer;
    this.el = h("div", { class: "approvals" });
    this.cards = new Map();
    this.key = "";
    this.notice = null;
    this.inputs = new Inputs({
      approvals: ({ state }) => state.approvals,
      notice: ({ state }) => state.notice,
    });
  }

  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return;
    // An answer the server refused (an `error` while the card is still up) makes the
    // card answerable again; a card is otherwise kept as it is (an edit in progress).
    if (inp.notice !== this.notice) {
      this.notice = inp.notice;
      if (inp.notice?.kind === "error") for (const card of this.cards.values()) card.unlock();
    }
    const key = inp.approvals.map((a) => a.approval_id).join();
    if (key === this.key) return;
    this.key = key;
    const cards = new Map();
    for (const a of inp.approvals) cards.set(a.approval_id, this.cards.get(a.approval_id) || approvalCard(a, this.answer));
    this.cards = cards;
    this.el.replaceChildren(...cards.values());
  }
}
