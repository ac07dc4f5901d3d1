// Settings → Models: a model's context window, set by the person, with what discovery
// found beside it (or, when nothing is known, the 128 000 tokens Numi assumes).
import { h } from "../dom.js";

/** The window Numi assumes when the catalog knows none (backend/turns/context.py DEFAULT_WINDOW). */
export const ASSUMED_WINDOW = 128_000;

const spaced = (n) => Math.round(n).toLocaleString("en-US").replace(/,/g, " ");

/** What the hint beside the field says about where the model's window comes from. */
export function windowSource(m) {
  const found = m.discovered_context_window;
  if (!m.context_window) {
    return found ? `Not set: assumed ${spaced(ASSUMED_WINDOW)} (discovery found ${spaced(found)})`
      : `Not known: assumed ${spaced(ASSUMED_WINDOW)} tokens`;
  }
  if (!found) return "Set by you; discovery found none";
  return found === m.context_window ? "As discovery found" : `Discovery found ${spaced(found)}`;
}

/**
 * The "Context window" field of a model's card.
 * @param m a model from GET /api/models; @param save(body) PATCHes it and redraws
 */
export function windowField(m, save) {
  const id = `window-${m.id}`;
  const error = h("span", { class: "field-error", id: `${id}-err`, role: "alert" });
  const input = h("input", { type: "number", id, class: "narrow", min: 1, max: 100_000_000, step: 1, inputmode: "numeric",
    value: m.context_window ?? "", placeholder: String(ASSUMED_WINDOW), "aria-describedby": `${id}-src ${id}-err` });
  input.addEventListener("change", () => {
    const text = input.value.trim();
    const n = Number(text);
    if (text && !(Number.isInteger(n) && n >= 1 && n <= 100_000_000)) {
      error.textContent = "A whole number of tokens, from 1 to 100 000 000 (empty: not known).";
      input.setAttribute("aria-invalid", "true");
      return;
    }
    error.textContent = "";
    input.removeAttribute("aria-invalid");
    save({ context_window: text ? n : null });
  });
  return h("div", { class: "row model-window" },
    h("label", { for: id, class: "hint" }, "Context window:"), input, h("span", { class: "hint" }, "tokens"),
    h("span", { class: "hint", id: `${id}-src` }, windowSource(m)), error);
}
