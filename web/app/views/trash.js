// The Trash (#/trash): deleted chats, newest deletion first, each with Restore and
// Delete forever, and Empty trash for all of them (both asked first). The list is
// read when the view opens and again when an app-socket frame says a chat was
// deleted or restored anywhere (no polling).
import { h, formatTime } from "../dom.js";
import { get } from "../api.js";
import { schedule } from "../store.js";

/** The header every place view shares: the narrow-window drawer toggle and an h1. */
export function placeHeader(title, titleId, actions, ...extra) {
  const heading = h("h1", { class: "chat-title", id: titleId, tabindex: -1 }, title);
  return [heading, h("header", { class: "chat-header" },
    h("button", { type: "button", class: "ghost icon-btn only-narrow drawer-toggle", "aria-label": "Show chats", "aria-controls": "sidebar", "aria-expanded": "false", onclick: () => actions.openSidebar() }, h("span", { class: "i i-menu", "aria-hidden": "true" })),
    heading, h("span", { class: "spacer" }), ...extra)];
}

/** Reads pages of a list; reads asked for while one is in flight collapse into one more. */
export class Pages {
  constructor(url) {
    this.url = url;
    this.items = null;       // null until the first read answers
    this.cursor = null;
    this.error = null;
    this.version = 0;
  }

  async load() {
    if (this.loading) { this.again = true; return this.loading; }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const page = await get(this.url(null));
          this.items = page.items;
          this.cursor = page.next_cursor;
          this.extra = page;
          this.error = null;
        } while (this.again);
      } catch (err) { this.error = err; } finally { this.loading = null; this.version += 1; schedule(); }
    })();
    return this.loading;
  }

  async more() {
    if (!this.cursor) return;
    try {
      const page = await get(this.url(this.cursor));
      const have = new Set(this.items.map((c) => c.id));
      this.items = this.items.concat(page.items.filter((c) => !have.has(c.id)));
      this.cursor = page.next_cursor;
    } catch (err) { this.error = err; }
    this.version += 1;
    schedule();
  }
}

export class TrashView {
  /** @param actions {{openSidebar(), restore(id, title), purge(id, title), emptyTrash(count)}} */
  constructor(actions) {
    this.actions = actions;
    this.pages = new Pages((cursor) => `/api/trash?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    this.empty = h("button", { type: "button", class: "danger empty-trash", disabled: true, onclick: () => this._emptyAll() }, "Empty trash");
    const [heading, header] = placeHeader("Trash", "trash-title", actions, this.empty);
    this.heading = heading;
    this.note = h("p", { class: "hint" });
    this.list = h("ul", { class: "place-list", "aria-labelledby": "trash-title" });
    this.moreBtn = h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => this.pages.more() }, "Show more");
    this.el = h("section", { class: "place trash", "aria-labelledby": "trash-title" }, header,
      h("div", { class: "scroller" }, h("div", { class: "place-body" }, this.note, this.list, this.moreBtn)));
    this.key = "";
    this.pages.load();
  }

  focus() { this.heading.focus(); }

  /** Frames of /ws/_app: a chat deleted or restored anywhere changes what the trash holds. */
  onAppFrame(frame) {
    if (frame.type === "chat_removed" || frame.type === "chat_changed" || frame.type === "resync") this.pages.load();
  }

  async _emptyAll() {
    // With pages not read yet the count is not known here: the sheet says "every chat".
    const p = this.pages;
    if (await this.actions.emptyTrash(p.cursor ? null : p.items?.length || 0)) p.load();
  }

  render() {
    const p = this.pages;
    const key = `${p.version}`;
    if (key === this.key) return;
    this.key = key;
    const days = p.extra?.retention_days;
    this.note.textContent = p.error ? p.error.message
      : days ? `Deleted chats stay here for ${days} days, then Numi removes them for good.` : "Deleted chats stay here until you empty the trash.";
    this.empty.disabled = !p.items?.length;
    this.moreBtn.hidden = !p.cursor;
    if (!p.items) { this.list.replaceChildren(); return; }
    const focused = document.activeElement?.closest?.(".place-row")?.dataset.id;
    this.list.replaceChildren(...(p.items.length ? p.items.map((c) => this._row(c))
      : [h("li", { class: "hint list-empty" }, "The trash is empty.")]));
    // A row that went (restored, deleted) hands focus to the list's heading, not to nowhere.
    if (focused && !this.list.contains(document.activeElement)) this.heading.focus();
  }

  _row(chat) {
    const title = chat.title || "New chat";
    const act = async (fn) => { if (await fn(chat.id, chat.title)) this.pages.load(); };
    return h("li", { class: "place-row", dataset: { id: chat.id } },
      h("div", { class: "grow" }, h("div", { class: "place-title" }, title),
        h("div", { class: "hint" }, `Deleted ${formatTime(chat.deleted_at)}`)),
      h("button", { type: "button", "aria-label": `Restore ${title}`, onclick: () => act(this.actions.restore) }, "Restore"),
      h("button", { type: "button", class: "ghost danger-text", "aria-label": `Delete ${title} forever`, onclick: () => act(this.actions.purge) }, "Delete forever"));
  }
}
