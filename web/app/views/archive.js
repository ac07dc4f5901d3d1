// Archived chats (#/archive): filed away out of the chat list, still whole. Each opens
// as any chat does, and can be unarchived or deleted (to the trash, with Undo). The
// list is read when the view opens and again when an app-socket frame concerns a chat
// that is, or was, archived (no polling).
import { h, formatTime } from "../dom.js";
import { Pages, placeHeader } from "./trash.js";

export class ArchiveView {
  /** @param actions {{openSidebar(), archive(id, archived), remove(id, title)}} */
  constructor(actions) {
    this.actions = actions;
    this.pages = new Pages((cursor) => `/api/chats?archived=1&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    const [heading, header] = placeHeader("Archived chats", "archive-title", actions);
    this.heading = heading;
    this.note = h("p", { class: "hint" }, "Archived chats are kept whole, out of your chat list. Open one to read or continue it.");
    this.list = h("ul", { class: "place-list", "aria-labelledby": "archive-title" });
    this.moreBtn = h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => this.pages.more() }, "Show more");
    this.el = h("section", { class: "place archive", "aria-labelledby": "archive-title" }, header,
      h("div", { class: "scroller" }, h("div", { class: "place-body" }, this.note, this.list, this.moreBtn)));
    this.key = "";
    this.pages.load();
  }

  focus() { this.heading.focus(); }

  onAppFrame(frame) {
    const shown = (id) => this.pages.items?.some((c) => c.id === id);
    if (frame.type === "resync" || (frame.type === "chat_changed" && (frame.chat.archived || shown(frame.chat.id)))
        || (frame.type === "chat_removed" && shown(frame.chat_id))) {
      this.pages.load();
    }
  }

  render() {
    const p = this.pages;
    const key = `${p.version}`;
    if (key === this.key) return;
    this.key = key;
    this.moreBtn.hidden = !p.cursor;
    if (p.error) this.note.textContent = p.error.message;
    if (!p.items) { this.list.replaceChildren(); return; }
    const focused = document.activeElement?.closest?.(".place-row")?.dataset.id;
    this.list.replaceChildren(...(p.items.length ? p.items.map((c) => this._row(c))
      : [h("li", { class: "hint list-empty" }, "No archived chats. Archive one from its ⋯ menu in the chat list.")]));
    if (focused && !this.list.contains(document.activeElement)) this.heading.focus();
  }

  _row(chat) {
    const title = chat.title || "New chat";
    return h("li", { class: "place-row", dataset: { id: chat.id } },
      h("div", { class: "grow" },
        h("a", { class: "place-title", href: `#/c/${encodeURIComponent(chat.id)}` }, title),
        h("div", { class: "hint" }, `Last active ${formatTime(chat.updated_at)}`)),
      h("button", { type: "button", "aria-label": `Unarchive ${title}`, onclick: async () => { await this.actions.archive(chat.id, false); this.pages.load(); } }, "Unarchive"),
      h("button", { type: "button", class: "ghost danger-text", "aria-label": `Delete ${title}`, onclick: async () => { await this.actions.remove(chat.id, chat.title); this.pages.load(); } }, "Delete"));
  }
}
