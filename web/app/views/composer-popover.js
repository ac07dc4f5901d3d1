// A button by the composer and the popover it opens (role="dialog"), as the Tools and Knowledge
// pickers share it: the button toggles it; Esc closes it and gives focus back to the button;
// focus leaving the picker closes it. A subclass fills `this.popup` and loads in `opened()`.
import { h } from "../dom.js";

let seq = 0;

export class ComposerPopover {
  /**
   * @param o {{label: string, buttonClass: string, buttonContent: Node[], popupClass: string,
   *            pickerClass: string, title?: string}}
   */
  constructor({ label, buttonClass, buttonContent, popupClass, pickerClass, title = label }) {
    this.popupId = `composer-popup-${++seq}`;
    this.button = h("button", { type: "button", class: `ghost tools-btn ${buttonClass}`.trim(), "aria-haspopup": "dialog",
      "aria-expanded": "false", "aria-controls": this.popupId, "aria-label": label, title,
      onclick: () => (this.isOpen ? this.close() : this.open()) }, ...buttonContent);
    // tabindex -1: a click on the popover's text keeps focus inside it, so it stays open.
    this.popup = h("div", { class: `tools-popup up ${popupClass}`.trim(), id: this.popupId, role: "dialog",
      "aria-label": label, tabindex: "-1", hidden: true, onkeydown: (e) => this._key(e) });
    this.el = h("div", { class: `tools-picker ${pickerClass}`.trim() }, this.button, this.popup);
    this.el.addEventListener("focusout", (e) => {
      if (this.isOpen && !this.redrawing() && !this.el.contains(e.relatedTarget)) this.close(false);
    });
    this.isOpen = false;
  }

  /** Whether it may open now (e.g. a chat is open). */
  canOpen() { return true; }

  /** Its content is being replaced: the browser blurs a focused control as it goes, which is no leaving. */
  redrawing() { return false; }

  /** Just shown, with focus on the popover: load and draw what it holds. */
  async opened() {}

  async open() {
    if (this.isOpen || !this.canOpen()) return;
    this.isOpen = true;
    this.popup.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.popup.focus();
    await this.opened();
  }

  /** @param refocus give focus back to the button (Esc), not when focus left on its own */
  close(refocus = true) {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.popup.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (refocus) this.button.focus();
  }

  _key(e) {
    if (e.key !== "Escape") return;
    // Handled here: the window's Esc would otherwise stop a running reply.
    e.preventDefault();
    e.stopPropagation();
    this.close();
  }
}
