// Settings → Memory (CONTRACT §8): memory on or off for every chat (settings.memory), and every
// memory the chats saved, newest first: its text, its date and the chat it came from (a link,
// or "chat deleted"), edited in place, deleted, searched (GET /api/memories?q=), added by hand,
// and "Forget everything" (asked first: it cannot be undone). A memory's text was written by a
// model: it is shown as text, never as markup. A reply's memory source or chip opens this page
// at the memory it names (views/memory-link.js).
import { h } from "../dom.js";
import { del, get, patch, post } from "../api.js";
import { app, schedule } from "../store.js";
import { confirmSheet } from "./folders.js";
import { takeRevealed } from "./memory-link.js";
import { EMPTY_SENTENCE, TEXT_MAX, listPath, sourceChat, textProblem } from "../../js/memory.js";

const enc = encodeURIComponent;
const SEARCH_PAUSE_MS = 200;
let seq = 0;

/** A memory's date as a person reads it: "12 Mar 2025". */
function dateOf(seconds) {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" });
}

function fieldError(err) {
  return err.fields?.text || (err.fields ? Object.values(err.fields).join(" ") : err.message);
}

export class MemorySection {
  constructor() {
    this.items = [];
    this.chats = new Map(); // source chat id → the chat, or null once GET answered 404
    this.asked = 0; // the newest list read asked for: an older answer arriving late is dropped
    const n = ++seq;
    this.enabled = h("input", { type: "checkbox", id: `mem-enabled-${n}`, "aria-describedby": `mem-enabled-${n}-hint`,
      onchange: () => this._saveEnabled() });
    this.enabledHint = h("p", { class: "hint", id: `mem-enabled-${n}-hint` });
    this.enabledError = h("p", { class: "field-error", role: "alert" });
    this.search = h("input", { type: "search", id: `mem-search-${n}`, autocomplete: "off", placeholder: "Search memories",
      "aria-label": "Search memories", oninput: () => this._searchSoon() });
    this.search.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.search.value) { e.stopPropagation(); this.search.value = ""; this.load(); }
    });
    this.count = h("p", { class: "hint mem-count", role: "status" });
    this.list = h("ul", { class: "mem-list", "aria-label": "Memories", "aria-busy": "true" });
    this.empty = h("p", { class: "hint mem-empty", hidden: true });
    this.error = h("p", { class: "field-error mem-load-error", role: "alert" });
    this.said = h("p", { class: "hint mem-said", role: "status" });
    this.forget = h("button", { type: "button", class: "danger mem-forget", onclick: () => this._forgetEverything() }, "Forget everything");
    this.forgetSaid = h("p", { class: "hint", role: "status" });
    this.el = h("div", { class: "memory-settings" },
      h("div", { class: "card s-row" },
        h("div", { class: "field" }, h("label", { class: "check", for: this.enabled.id }, this.enabled, " Use memory"),
          this.enabledHint, this.enabledError)),
      h("p", { class: "hint" }, "Facts about you that chats saved with the remember tool, each asked for first. "
        + "Every memory is here to read, change or delete; chats read them as notes about you, never as instructions. "
        + "Temporary chats never read or save memories, and a folder or a chat can turn memory off for itself."),
      h("div", { class: "row mem-search" }, this.search),
      this.error, this.count, this.list, this.empty, this.said,
      this._addForm(),
      h("div", { class: "card s-row mem-danger" },
        h("p", { class: "hint" }, "Delete every memory from this computer for good (the database is compacted so their text is gone)."),
        h("div", { class: "row" }, this.forget), this.forgetSaid));
    this.update();
    this.load();
  }

  /** The switch as settings.memory has it (not while it is being changed). */
  update() {
    const on = app.settings?.memory?.enabled !== false;
    if (document.activeElement !== this.enabled) this.enabled.checked = on;
    this.enabledHint.textContent = on
      ? "Chats may save facts about you (asking first) and read them in later chats."
      : "Memory is off: no chat reads or saves memories. The memories below are kept until you delete them.";
  }

  async _saveEnabled() {
    this.enabledError.textContent = "";
    const want = this.enabled.checked;
    try {
      app.settings = await patch("/api/settings", { memory: { enabled: want } });
      schedule();
    } catch (err) {
      this.enabled.checked = !want;
      this.enabledError.textContent = err.fields?.["memory.enabled"] || err.message;
    }
    this.update();
  }

  _searchSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.load(), SEARCH_PAUSE_MS);
  }

  /** Read the memories again (as searched), then the chats they came from. */
  async load() {
    clearTimeout(this.timer);
    const q = this.search.value.trim();
    const asked = ++this.asked;
    this.list.setAttribute("aria-busy", "true");
    try {
      const { items } = await get(listPath(q));
      if (asked !== this.asked) return;
      this.items = items;
      this.query = q;
      this.error.textContent = "";
      this._draw();
      this._readChats();
      this._reveal();
    } catch (err) {
      if (asked === this.asked) this.error.textContent = `The memories could not be read: ${fieldError(err)}`;
    } finally {
      if (asked === this.asked) this.list.setAttribute("aria-busy", "false");
    }
  }

  _draw() {
    // A memory being edited keeps its editor: a search or a reload never eats what is typed.
    const editing = new Map([...this.list.querySelectorAll(".mem-item.editing")].map((el) => [el.dataset.id, el]));
    this.list.replaceChildren(...this.items.map((m) => editing.get(m.id) || this._item(m)));
    const n = this.items.length;
    this.count.textContent = n ? (this.query ? `${n} ${n === 1 ? "memory matches" : "memories match"} “${this.query}”.`
      : `${n} ${n === 1 ? "memory" : "memories"}.`) : "";
    this.empty.textContent = n ? "" : this.query ? `No memory matches “${this.query}”.` : EMPTY_SENTENCE;
    this.empty.hidden = !!n;
    this.forget.disabled = !n && !this.query;
  }

  /** Look up the chats the memories came from (each once), then name them. */
  async _readChats() {
    const ids = [...new Set(this.items.map((m) => m.source_chat_id).filter((id) => id && !this.chats.has(id)))];
    if (!ids.length) return;
    await Promise.all(ids.map(async (id) => {
      try {
        this.chats.set(id, await get(`/api/chats/${enc(id)}`));
      } catch (err) {
        if (err.status === 404) this.chats.set(id, null);
      }
    }));
    for (const el of this.list.querySelectorAll(".mem-item:not(.editing)")) {
      const m = this.items.find((x) => x.id === el.dataset.id);
      if (m?.source_chat_id && ids.includes(m.source_chat_id)) el.querySelector(".mem-source")?.replaceWith(this._source(m));
    }
  }

  _source(m) {
    const where = sourceChat(m, this.chats.get(m.source_chat_id));
    if (where.kind === "chat") {
      return h("span", { class: "mem-source" }, "from ", h("a", { href: where.href, class: "mem-chat" }, where.title));
    }
    if (where.kind === "deleted") return h("span", { class: "mem-source mem-chat-gone" }, "from a chat deleted since");
    // No chat: added here by hand, or its chat was deleted for good (the server forgets the id then).
    return h("span", { class: "mem-source" }, m.source_chat_id ? "" : "no source chat");
  }

  _item(m) {
    const n = ++seq;
    const text = h("p", { class: "mem-text", id: `mem-text-${n}` }, m.text);
    const edited = m.updated_at - m.created_at > 1 ? ` · edited ${dateOf(m.updated_at)}` : "";
    const said = h("p", { class: "hint", role: "status" });
    const el = h("li", { class: "card mem-item s-row", tabindex: "-1", dataset: { id: m.id }, "aria-labelledby": text.id },
      text,
      h("div", { class: "row mem-meta" },
        h("span", { class: "hint grow" }, h("time", { datetime: new Date(m.created_at * 1000).toISOString() }, dateOf(m.created_at)),
          edited, " · ", this._source(m)),
        h("button", { type: "button", class: "ghost", "aria-describedby": text.id, onclick: () => this._edit(el, m) }, "Edit"),
        h("button", { type: "button", class: "ghost danger-text", "aria-describedby": text.id, onclick: () => this._delete(m, said) }, "Delete")),
      said);
    return el;
  }

  _edit(el, m) {
    const n = ++seq;
    const area = h("textarea", { id: `mem-edit-${n}`, rows: 3, maxlength: TEXT_MAX, value: m.text,
      "aria-describedby": `mem-edit-${n}-err` });
    const err = h("p", { class: "field-error", id: `mem-edit-${n}-err`, role: "alert" });
    const save = h("button", { type: "submit", class: "primary" }, "Save");
    const cancel = h("button", { type: "button", class: "ghost", onclick: () => { el.classList.remove("editing"); this._redrawItem(el, m); } }, "Cancel");
    const form = h("form", { class: "mem-edit", novalidate: true, "aria-label": "Edit the memory" },
      h("label", { for: area.id, class: "field-label" }, "Memory"), area, err, h("div", { class: "form-row" }, save, cancel));
    form.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); cancel.click(); } });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const problem = textProblem(area.value);
      err.textContent = problem;
      if (problem) { area.setAttribute("aria-invalid", "true"); area.focus(); return; }
      area.removeAttribute("aria-invalid");
      save.disabled = true;
      try {
        const saved = area.value.trim() === m.text ? m : await patch(`/api/memories/${enc(m.id)}`, { text: area.value });
        this.items = this.items.map((x) => (x.id === m.id ? saved : x));
        el.classList.remove("editing");
        this._redrawItem(el, saved);
        this.said.textContent = "Memory saved.";
      } catch (e2) {
        if (e2.status === 404) { el.classList.remove("editing"); await this.load(); return; }
        err.textContent = fieldError(e2);
        area.setAttribute("aria-invalid", "true");
        area.focus();
      } finally {
        save.disabled = false;
      }
    });
    el.classList.add("editing");
    el.replaceChildren(form);
    area.focus();
  }

  _redrawItem(el, m) {
    const fresh = this._item(m);
    el.replaceWith(fresh);
    fresh.querySelector("button")?.focus();
  }

  async _delete(m, said) {
    try {
      await del(`/api/memories/${enc(m.id)}`);
    } catch (err) {
      if (err.status !== 404) { said.textContent = err.message; return; }
    }
    await this.load();
    this.said.textContent = "Memory deleted.";
    this.search.focus();
  }

  async _forgetEverything() {
    const sure = await confirmSheet({ title: "Forget everything?", confirm: "Forget everything",
      message: "Every memory is deleted from this computer, and chats will know none of these facts. This cannot be undone." });
    if (!sure) return;
    this.forget.disabled = true;
    try {
      await del("/api/memories");
      this.search.value = "";
      await this.load();
      this.forgetSaid.textContent = "Every memory was deleted.";
    } catch (err) {
      this.forgetSaid.textContent = err.message;
      this.forget.disabled = false;
    }
  }

  _addForm() {
    const n = ++seq;
    const area = h("textarea", { id: `mem-add-${n}`, rows: 2, maxlength: TEXT_MAX, placeholder: "e.g. Prefers metric units.",
      "aria-describedby": `mem-add-${n}-err` });
    const err = h("p", { class: "field-error", id: `mem-add-${n}-err`, role: "alert" });
    const status = h("p", { class: "form-status", role: "status" });
    const form = h("form", { class: "provider-form mem-add", novalidate: true },
      h("div", { class: "field" }, h("label", { for: area.id }, "A fact about you"), area, err),
      h("div", { class: "form-row" }, h("button", { type: "submit", class: "primary" }, "Add memory"), status));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      status.textContent = "";
      const problem = textProblem(area.value);
      err.textContent = problem;
      if (problem) { area.focus(); return; }
      try {
        await post("/api/memories", { text: area.value });
        area.value = "";
        status.textContent = "Added.";
        await this.load();
      } catch (e2) {
        err.textContent = fieldError(e2);
        area.focus();
      }
    });
    return h("details", { class: "card s-row mem-new" }, h("summary", {}, "Add a memory yourself"), form);
  }

  /** The memory a link from a chat named: shown and focused, once its list is in. */
  _reveal() {
    const id = takeRevealed();
    if (!id) return;
    const el = this.list.querySelector(`.mem-item[data-id="${CSS.escape(id)}"]`);
    if (!el) return;
    el.classList.add("revealed");
    el.scrollIntoView({ block: "center" });
    el.focus();
  }
}
