// The way from a chat to Settings → Memory: a memory source under a reply and a chip's
// "Open Memory" lead there (an address in the app, never a browser tab), and the page then
// shows the memory they named (views/memory-settings.js takes it with takeRevealed).
import { h } from "../dom.js";

export const MEMORY_ROUTE = "#/settings/memory";
let revealed = null;

/** Settings → Memory, showing memory `id` (when given) once its list is in. */
export function openMemory(id = null) {
  revealed = id;
  if (location.hash !== MEMORY_ROUTE) location.hash = MEMORY_ROUTE;
}

/** The memory a link asked Settings → Memory to show, once (null when none). */
export function takeRevealed() {
  const id = revealed;
  revealed = null;
  return id;
}

/** A link to Settings → Memory reading `text` (a memory's text: set as text, never markup). */
export function memoryLink(id, text, attrs = {}) {
  return h("a", { href: MEMORY_ROUTE, title: "Opens Settings → Memory", ...attrs, dataset: { memory: id || "" },
    onclick: (e) => { e.preventDefault(); openMemory(id); } }, text);
}
