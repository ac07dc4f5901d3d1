// The chat list: pinned first, then newest activity first (the server's order).
// Markers: a pulsing dot while a reply runs, a bold title and dot when unread.
// Rename by double-click or the ⋯ menu; pin; delete (with Undo in a toast).
import { h } from "../dom.js";
import { app } from "../store.js";

export class Sidebar {
  /** @param actions {{newChat(), open(id), rename(id, title), pin(id, pinned), remove(id), more(), settings(), toggleTheme(), help()}} */
  constructor(actions) {
    this.actions = actions;
    this.list = h("nav", { class: "chat-list", "aria-label": "Chats" });
    this.more = h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => actions.more() }, "Show older chats");
    this.el = h("aside", { class: "sidebar", id: "sidebar" },
      h("div", { class: "sidebar-top" },
        h("span", { class: "brand" }, h("img", { src: "icons/numi.svg", alt: "", width: 22, height: 22 }), "Numi"),
        h("button", { type: "button", class: "primary new-chat", "aria-label": "New chat (Ctrl+N)", "aria-keyshortcuts": "Control+N Meta+N", onclick: () => actions.newChat() }, "+ New chat")),
      this.list, this.more,
      h("div", { class: "sidebar-bottom" },
        h("button", { type: "button", class: "ghost", "aria-label": "Settings (Ctrl+,)", onclick: () => actions.settings() }, "⚙ Settings"),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Switch light or dark theme", onclick: () => actions.toggleTheme() }, "◐"),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Keyboard shortcuts (?)", onclick: () => actions.help() }, "?")));
    this.key = "";
    this.renaming = null;
    this.menuFor = null;
    // Delegated: a click on a chat re-renders the list (the current chat changes), so a
    // listener on the clicked row could be gone by the second click of a double-click.
    this.list.addEventListener("dblclick", (e) => {
      const row = e.target.closest?.(".chat-item");
      if (!row || row.classList.contains("renaming")) return;
      e.preventDefault();
      this.renaming = row.dataset.id;
      this.render();
    });
  }

  render() {
    const current = app.route.name === "chat" ? app.route.chatId : null;
    const key = `${app.chatsVersion}|${this.renaming}|${this.menuFor}|${app.chatsCursor}`;
    if (key === this.key) {
      // Only the open chat changed: move the highlight, keep the rows (and a double-click in progress).
      if (current !== this.current) {
        this.current = current;
        for (const row of this.list.querySelectorAll(".chat-item")) {
          const on = row.dataset.id === current;
          row.classList.toggle("current", on);
          const link = row.querySelector(".chat-link");
          if (on) link?.setAttribute("aria-current", "page"); else link?.removeAttribute("aria-current");
        }
      }
      return;
    }
    this.key = key;
    this.current = current;
    const pinned = app.chats.filter((c) => c.pinned);
    const rest = app.chats.filter((c) => !c.pinned);
    const groups = [];
    if (pinned.length) groups.push(h("div", { class: "group-label" }, "Pinned"), ...pinned.map((c) => this._item(c, current)));
    if (pinned.length && rest.length) groups.push(h("div", { class: "group-label" }, "Recent"));
    groups.push(...rest.map((c) => this._item(c, current)));
    if (!app.chats.length) groups.push(h("p", { class: "hint list-empty" }, "No chats yet."));
    // Keep focus on the same row across a redraw (e.g. after a rename).
    const focusedId = document.activeElement?.closest?.(".chat-item")?.dataset.id;
    this.rebuilding = true;
    this.list.replaceChildren(...groups);
    this.rebuilding = false;
    if (this.renameInput?.isConnected && document.activeElement !== this.renameInput) this.renameInput.focus();
    else if (focusedId) this.list.querySelector(`.chat-item[data-id="${CSS.escape(focusedId)}"] .chat-link`)?.focus();
    this.more.hidden = !app.chatsCursor;
  }

  _item(chat, current) {
    const title = chat.title || "New chat";
    if (this.renaming === chat.id) {
      // Reused across redraws (the list may refresh while someone types).
      if (this.renameInput?.dataset.id === chat.id) return this.renameInput.parentElement;
      const input = h("input", { class: "rename", value: chat.title || "", "aria-label": "Chat title", maxlength: 300, dataset: { id: chat.id } });
      this.renameInput = input;
      const finish = (save) => {
        if (this.renaming !== chat.id || this.rebuilding) return;
        this.renaming = null;
        this.renameInput = null;
        if (save && input.value.trim() && input.value.trim() !== chat.title) this.actions.rename(chat.id, input.value.trim());
        this.key = "";
        this.render();
      };
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") { e.preventDefault(); finish(true); }
        if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); finish(false); }
      });
      input.addEventListener("blur", () => finish(true));
      queueMicrotask(() => { input.focus(); input.select(); });
      return h("div", { class: "chat-item renaming", dataset: { id: chat.id } }, input);
    }
    const marks = [];
    if (chat.running) marks.push(h("span", { class: "mark running", title: "A reply is being written", "aria-label": "running" }));
    else if (chat.unread) marks.push(h("span", { class: "mark unread", title: "New reply", "aria-label": "unread" }));
    const link = h("a", {
      class: "chat-link", href: `#/c/${encodeURIComponent(chat.id)}`,
      "aria-current": chat.id === current ? "page" : null,
    }, chat.pinned ? h("span", { class: "pin", "aria-label": "pinned" }, "📌") : null, h("span", { class: "chat-name" }, title), ...marks);
    const menuBtn = h("button", {
      type: "button", class: "ghost icon-btn item-menu", "aria-label": `Options for ${title}`, "aria-haspopup": "menu",
      "aria-expanded": this.menuFor === chat.id ? "true" : "false",
      onclick: (e) => { e.stopPropagation(); this.menuFor = this.menuFor === chat.id ? null : chat.id; this.render(); },
    }, "⋯");
    const item = h("div", { class: `chat-item${chat.unread ? " is-unread" : ""}${chat.id === current ? " current" : ""}`, dataset: { id: chat.id } }, link, menuBtn);
    if (this.menuFor === chat.id) {
      const close = () => { this.menuFor = null; this.render(); };
      const menu = h("div", { class: "menu", role: "menu" },
        h("button", { type: "button", role: "menuitem", onclick: () => { this.menuFor = null; this.renaming = chat.id; this.render(); } }, "Rename"),
        h("button", { type: "button", role: "menuitem", onclick: () => { close(); this.actions.pin(chat.id, !chat.pinned); } }, chat.pinned ? "Unpin" : "Pin"),
        h("button", { type: "button", role: "menuitem", class: "danger-text", onclick: () => { close(); this.actions.remove(chat.id); } }, "Delete"));
      menu.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); close(); menuBtn.focus(); } });
      item.append(menu);
      queueMicrotask(() => menu.querySelector("button")?.focus());
    }
    return item;
  }

  closeMenu() {
    if (this.menuFor) { this.menuFor = null; this.render(); }
  }
}
