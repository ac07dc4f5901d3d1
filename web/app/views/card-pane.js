// A pane of cards waiting for the person (approvals, questions): one card per waiting item,
// kept while it waits so an edit in progress stays; a refused answer (an `error` notice
// while the cards are up) makes them answerable again, saying why.
import { h } from "../dom.js";
import { Inputs } from "../../js/view-inputs.js";

export class CardPane {
  /**
   * @param className the pane's class
   * @param select ({ state }) → the waiting items, in order
   * @param idOf (item) → its id
   * @param makeCard (item) → its card element, with `unlock(message?)`
   */
  constructor(className, select, idOf, makeCard) {
    this.idOf = idOf;
    this.makeCard = makeCard;
    this.el = h("div", { class: className });
    this.cards = new Map();
    this.key = "";
    this.notice = null;
    this.inputs = new Inputs({
      items: select,
      notice: ({ state }) => state.notice,
    });
  }

  /** Draw the waiting items; the cards made for items new since the last draw, in order (null: unchanged). */
  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return null;
    if (inp.notice !== this.notice) {
      this.notice = inp.notice;
      if (inp.notice?.kind === "error") for (const card of this.cards.values()) card.unlock(inp.notice.message);
    }
    const key = inp.items.map(this.idOf).join();
    if (key === this.key) return null;
    this.key = key;
    const cards = new Map();
    const fresh = [];
    for (const item of inp.items) {
      const id = this.idOf(item);
      let card = this.cards.get(id);
      if (!card) fresh.push((card = this.makeCard(item)));
      cards.set(id, card);
    }
    this.cards = cards;
    this.el.replaceChildren(...cards.values());
    return fresh;
  }
}
