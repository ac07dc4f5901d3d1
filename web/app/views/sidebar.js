// The chat list: pinned first, then newest activity first (the server's order).
// Markers: a pulsing dot while a reply runs, a bold title and dot when unread.
// Rename by double-click or the ⋯ menu; pin; delete (with Undo in a toast).
import { h } from "../dom.js";
import { app } from "../store.js";

export class Sidebar {
  /** @param actions {{newChat(), open(id), rename(id, title), pin(id, pinned), remove(id), more(), settings(), toggleTheme(), help()}} */
  constructor(actions) {
    this.actions = actions;
    this.list = h("nav", { class: "chat-list", "aria-label": "Chats", "aria-describedby": "chat-list-keys" });
    this.more = h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => actions.more() }, "Show older chats");
    this.el = h("aside", { class: "sidebar", id: "sidebar" },
      h("div", { class: "sidebar-top" },
        h("span", { class: "brand" }, h("img", { src: "icons/numi.svg", alt: "", width: 22, height: 22 }), "Numi"),
        h("button", { type: "button", class: "primary new-chat", "aria-label": "New chat (Ctrl+N)", "aria-keyshortcuts": "Control+N Meta+N", onclick: () => actions.newChat() }, "+ New chat")),
      h("p", { class: "sr-only", id: "chat-list-keys" }, "Up and Down arrows move between chats, Enter opens, F2 renames, Delete deletes."),
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
    this.list.addEventListener("keydown", (e) => this._key(e));
    // One chat row is in the Tab order at a time (roving tabindex): the one last focused.
    this.list.addEventListener("focusin", (e) => {
      const row = e.target.closest?.(".chat-item");
      if (row && !row.classList.contains("renaming")) this._rove(row);
    });
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
    const rowOf = (id) => id && this.list.querySelector(`.chat-item[data-id="${CSS.escape(id)}"]:not(.renaming)`);
    const afterRow = !rowOf(focusedId) && this.focusAfter && rowOf(this.focusAfter);
    const focusRow = rowOf(focusedId) || afterRow;
    this._rove(focusRow || rowOf(this.roving) || rowOf(current) || this.list.querySelector(".chat-item:not(.renaming)"));
    if (this.renameInput?.isConnected && document.activeElement !== this.renameInput) this.renameInput.focus();
    else if (focusRow && (focusedId || document.activeElement === document.body || !document.activeElement)) {
      focusRow.querySelector(".chat-link")?.focus();
    }
    if (afterRow) this.focusAfter = null;
    this.more.hidden = !app.chatsCursor;
  }

  /** Make `row` the chat row that Tab reaches; the others are reached with the arrows. */
  _rove(row) {
    if (!row) return;
    this.roving = row.dataset.id;
    for (const el of this.list.querySelectorAll(".chat-link, .item-menu")) {
      el.tabIndex = el.closest(".chat-item") === row ? 0 : -1;
    }
  }

  /** Up/Down/Home/End move between chats, Enter opens (the link), F2 renames, Delete/Backspace deletes. */
  _key(e) {
    const link = e.target.closest?.(".chat-link");
    if (!link || e.altKey || e.ctrlKey || e.metaKey) return;
    const row = link.closest(".chat-item");
    const links = [...this.list.querySelectorAll(".chat-item:not(.renaming) .chat-link")];
    const at = links.indexOf(link);
    const move = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: links.length - 1 }[e.key];
    if (move !== undefined) {
      e.preventDefault();
      links[Math.max(0, Math.min(links.length - 1, move))]?.focus();
    } else if (e.key === "F2") {
      e.preventDefault();
      this.menuFor = null;
      this.renaming = row.dataset.id;
      this.render();
    } else if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      // Focus goes on to the next chat (or the one before) once the row is gone.
      const next = links[at + 1] || links[at - 1];
      this.focusAfter = next?.closest(".chat-item").dataset.id || null;
      this.actions.remove(row.dataset.id);
    }
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
    if (chat.running) marks.push(h("span", { class: "mark running", role: "img", title: "A reply is being written", "aria-label": "running" }));
    else if (chat.unread) marks.push(h("span", { class: "mark unread", role: "img", title: "New reply", "aria-label": "unread" }));
    const link = h("a", {
      class: "chat-link", href: `#/c/${encodeURIComponent(chat.id)}`,
      "aria-current": chat.id === current ? "page" : null, tabindex: -1,
      "aria-keyshortcuts": "ArrowUp ArrowDown Enter F2 Delete",
    }, chat.pinned ? h("span", { class: "pin", role: "img", "aria-label": "pinned" }, "📌") : null, h("span", { class: "chat-name" }, title), ...marks);
    const menuBtn = h("button", {
      type: "button", class: "ghost icon-btn item-menu", "aria-label": `Options for ${title}`, "aria-haspopup": "menu", tabindex: -1,
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
