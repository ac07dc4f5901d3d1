// Search across every chat (Ctrl/⌘+K): a modal sheet (dialogs.js conventions: focus
// trapped, Esc closes, named by its heading) with a search box and the best matches.
// Typing searches after a short pause, and an answer to an older query is dropped, so
// what is listed always belongs to what is typed. Hits are <mark> elements built from
// the API's offsets (web/js/search-hits.js): snippets are never parsed as markup.
import { h } from "../dom.js";
import { get } from "../api.js";
import { sheet } from "./dialogs.js";
import { splitHits } from "../../js/search-hits.js";

const PAUSE_MS = 150;
const LIMIT = 20;
const HINT = "Type to search every chat. The last word matches as you type; \"quotes\" find a phrase.";
let opened = 0;

/** @param choose called with the picked result ({chat_id, message_id, …}) once the sheet is closed */
export function openSearch(choose) {
  const already = document.querySelector("dialog.search-sheet");
  if (already) { already.querySelector(".search-input")?.focus(); return; }
  const listId = `search-results-${++opened}`;
  const input = h("input", {
    type: "text", class: "search-input", role: "combobox", "aria-label": "Search all chats",
    "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": listId,
    autocomplete: "off", spellcheck: false, maxlength: 500, placeholder: "Search chats",
  });
  const status = h("p", { class: "search-status hint", role: "status" }, HINT);
  const list = h("ul", { class: "search-results", id: listId, role: "listbox", "aria-label": "Results" });
  const d = sheet("Search", input, status, list);
  d.classList.add("search-sheet");

  let results = [];
  let active = -1;
  let timer = 0;
  let seq = 0;        // the newest query sent; answers to older ones are dropped
  let pending = null; // the newest query's request, while it runs
  let closed = false;
  d.addEventListener("close", () => { closed = true; clearTimeout(timer); });

  function setActive(i) {
    active = i;
    [...list.children].forEach((li, k) => li.setAttribute("aria-selected", String(k === i)));
    const li = list.children[i];
    if (li) {
      input.setAttribute("aria-activedescendant", li.id);
      li.scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function pick(i) {
    const item = results[i];
    if (!item) return;
    d.close();
    choose(item);
  }

  function show(items, q) {
    results = items;
    list.replaceChildren(...items.map((item, i) => resultItem(item, `${listId}-${i}`, {
      onclick: () => pick(i),
      onmousemove: () => { if (active !== i) setActive(i); },
    })));
    input.setAttribute("aria-expanded", String(items.length > 0));
    setActive(items.length ? 0 : -1);
    status.textContent = !q ? HINT : items.length
      ? `${items.length === LIMIT ? `The best ${LIMIT}` : items.length} result${items.length === 1 ? "" : "s"}. ↑ ↓ to choose, Enter to open.`
      : `No results for “${q.trim()}”.`;
  }

  function run() {
    timer = 0;
    const q = input.value;
    const mine = ++seq;
    if (!q.trim()) { pending = null; show([], ""); return Promise.resolve(); }
    pending = get(`/api/search?q=${encodeURIComponent(q)}&limit=${LIMIT}`).then(
      (page) => { if (mine === seq && !closed) show(page.items, q); },
      (err) => {
        if (mine !== seq || closed) return;
        show([], "");
        status.textContent = `Search failed: ${err.message}`;
      });
    return pending;
  }

  /** The answer for what is typed now: runs a search still waiting out its pause. */
  function settled() {
    if (timer) { clearTimeout(timer); return run(); }
    return pending || Promise.resolve();
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, PAUSE_MS);
  });
  input.addEventListener("keydown", async (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!results.length) return;
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive(Math.max(0, Math.min(results.length - 1, active + step)));
    } else if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      const typed = input.value;
      await settled();
      if (!closed && input.value === typed) pick(active < 0 ? 0 : active);
    }
  });
  input.focus();
}

function resultItem(item, id, handlers) {
  return h("li", { id, role: "option", class: "search-result", "aria-selected": "false", ...handlers },
    h("div", { class: "search-meta" },
      h("span", { class: "search-title" }, item.title || "New chat"),
      h("span", { class: "search-when" }, (item.role === "user" ? "You · " : "") + when(item.created_at))),
    h("div", { class: "search-snippet" },
      ...splitHits(item.snippet, item.highlights).map((p) => (p.hit ? h("mark", {}, p.text) : p.text))));
}

function when(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const sameYear = d.getFullYear() === new Date().getFullYear();
  return d.toLocaleDateString([], { month: "short", day: "numeric", ...(sameYear ? {} : { year: "numeric" }) });
}
