// Short notes at the bottom of the window, read out politely. A toast may carry one
// action (Undo). Each has a one-shot timer; none run when there is nothing to show.
import { h } from "../dom.js";

let region = null;

export function mountToasts(parent) {
  region = h("div", { class: "toasts", role: "status", "aria-live": "polite" });
  parent.append(region);
}

export function toast(text, { action, onAction, ms = 4000 } = {}) {
  if (!region) return;
  let timer = 0;
  const close = () => { clearTimeout(timer); el.remove(); };
  const el = h("div", { class: "toast" }, h("span", {}, text),
    action ? h("button", { type: "button", class: "ghost accent", onclick: () => { close(); onAction(); } }, action) : null,
    h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Dismiss", onclick: close }, h("span", { class: "i i-close", "aria-hidden": "true" })));
  region.append(el);
  timer = setTimeout(close, ms);
  return close;
}
