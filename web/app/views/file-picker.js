// A file picker that looks like the app's buttons: a button, then the chosen file's
// name. A real <input type=file> stays underneath (the button opens it; tests and
// drag-and-drop set files on it), out of sight and out of the Tab order.
import { h } from "../dom.js";

/**
 * @param id the input's id; label the button's text; accept the input's accept list
 * @param onFile (File) → Promise: after it settles the input is emptied, so the same file can be chosen again
 */
export function filePicker({ id, label, accept, describedBy, onFile }) {
  const input = h("input", { type: "file", id, accept, class: "file-input", tabindex: "-1", "aria-hidden": "true" });
  const name = h("span", { class: "file-name hint" }, "No file chosen");
  const button = h("button", { type: "button", class: "file-button", "aria-describedby": describedBy, onclick: () => input.click() }, label);
  input.addEventListener("change", async () => {
    const chosen = input.files[0];
    if (!chosen) return;
    name.textContent = chosen.name;
    try { await onFile(chosen); } finally { input.value = ""; }
  });
  return h("div", { class: "file-picker" }, input, button, name);
}
