// The chat list: pinned first, then each folder as a group that folds away, then the
// chats in no folder under date headings (Today, Yesterday, … by month) — each group
// newest activity first (the server's order). A chat dragged onto a folder is filed
// there, onto the chats outside folders taken out (the ⋯ menu's Move does the same).
// Markers: a pulsing dot while a reply runs, a "!" badge while a tool waits for the
// person's approval (`awaiting_approval`), a "?" badge while the model waits for the answer
// to a question (`awaiting_answer`), a bold title and dot when unread.
// Rename by double-click or the ⋯ menu; pin, move to a folder, archive, delete (with
// Undo in a toast). Below the list: the Archived and Trash views.
import { h } from "../dom.js";
import { app } from "../store.js";
import { dayStamp, groupByDate } from "../../js/date-groups.js";
import { menuKeys } from "./menu.js";
import { uiChoices, saveUiChoices } from "../ui-choices.js";


export class Sidebar {
  /** @param actions {{newChat(), open(id), rename(id, title), pin(id, pinned), remove(id), more(), settings(), toggleTheme(), help(),
   *    newFolder(), editFolder(id), exportFolder(id), deleteFolder(id), newChatInFolder(id), moveChat(id), fileChat(id, folderId), archive(id, archived)}} */
  constructor(actions) {
    this.actions = actions;
    this.list = h("nav", { class: "chat-list", "aria-label": "Chats", "aria-describedby": "chat-list-keys" });
    this.more = h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => actions.more() }, "Show older chats");
    // Links, not a second navigation landmark: they are places next to the list.
    this.archiveLink = h("a", { class: "place-link", href: "#/archive" }, "Archived chats");
    this.trashLink = h("a", { class: "place-link", href: "#/trash" }, "Trash");
    this.el = h("aside", { class: "sidebar", id: "sidebar" },
      h("div", { class: "sidebar-top" },
        h("span", { class: "brand" }, h("img", { src: "icons/numi.svg", alt: "", width: 22, height: 22 }), "Numi"),
        h("button", { type: "button", class: "primary new-chat", "aria-label": "New chat (Ctrl+N)", "aria-keyshortcuts": "Control+N Meta+N", onclick: () => actions.newChat() }, "+ New chat")),
      h("p", { class: "sr-only", id: "chat-list-keys" }, "Up and Down arrows move between chats, Enter opens, F2 renames, Delete deletes."),
      this.list, this.more,
      h("div", { class: "sidebar-places" }, this.archiveLink, this.trashLink),
      h("div", { class: "sidebar-bottom" },
        h("button", { type: "button", class: "ghost", "aria-label": "Settings (Ctrl+,)", onclick: () => actions.settings() }, h("span", { class: "i i-gear", "aria-hidden": "true" }), " Settings"),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Switch light or dark theme", onclick: () => actions.toggleTheme() }, h("span", { class: "i i-contrast", "aria-hidden": "true" })),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Keyboard shortcuts (?)", onclick: () => actions.help() }, "?")));
    this.key = "";
    this.renaming = null;
    this.menuFor = null;  // a chat id, or "folder:<id>"
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
    this._dragAndDrop();
  }

  render() {
    const current = app.route.name === "chat" ? app.route.chatId : null;
    this._places();
    // The day is part of the key: a list drawn before midnight is regrouped after it.
    const key = `${app.chatsVersion}|${app.foldersVersion}|${this.renaming}|${this.menuFor}|${app.chatsCursor}|${[...this.collapsed]}|${dayStamp()}`;
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
    const folderIds = new Set(app.folders.map((f) => f.id));
    const pinned = app.chats.filter((c) => c.pinned);
    const filed = new Map(app.folders.map((f) => [f.id, []]));
    const loose = [];
    for (const c of app.chats) {
      if (c.pinned) continue;
      if (c.folder_id && folderIds.has(c.folder_id)) filed.get(c.folder_id).push(c);
      else loose.push(c);
    }
    const groups = [];
    if (pinned.length) groups.push(h("div", { class: "group-label" }, "Pinned"), ...pinned.map((c) => this._item(c, current)));
    groups.push(h("div", { class: "group-label folders-label" }, h("span", {}, "Folders"),
      h("button", { type: "button", class: "ghost icon-btn new-folder", "aria-label": "New folder", title: "New folder", dataset: { focusKey: "new-folder" }, onclick: () => this.actions.newFolder() }, "+")));
    for (const folder of app.folders) groups.push(this._folder(folder, filed.get(folder.id), current));
    // Always named: the Folders heading above would otherwise seem to hold these. Shown
    // while any chat is filed too, as the place a chat is dropped to take it out.
    if (loose.length || app.chats.some((c) => c.folder_id && folderIds.has(c.folder_id))) {
      groups.push(h("div", { class: "loose-chats", dataset: { dropFolder: "" } },
        h("div", { class: "group-label" }, "Chats"),
        loose.length ? null : h("p", { class: "hint folder-empty" }, "Drop a chat here to take it out of its folder."),
        ...groupByDate(loose).flatMap((g) => [
          h("div", { class: "date-label", dataset: { group: g.key } }, g.label),
          ...g.chats.map((c) => this._item(c, current))])));
    }
    if (!app.chats.length) groups.push(h("p", { class: "hint list-empty" }, "No chats yet."));
    // Keep focus on the same row (or folder control) across a redraw (e.g. after a rename).
    const active = document.activeElement;
    const focusedId = active?.closest?.(".chat-item")?.dataset.id;
    const focusKey = this.list.contains(active) && !focusedId ? active.closest?.("[data-focus-key]")?.dataset.focusKey : null;
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
    } else if (focusKey && !this.list.contains(document.activeElement)) {
      this.list.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
    }
    if (afterRow) this.focusAfter = null;
    this.more.hidden = !app.chatsCursor;
  }

  /** The Archived and Trash links say which one is shown. */
  _places() {
    for (const [link, name] of [[this.archiveLink, "archive"], [this.trashLink, "trash"]]) {
      const on = app.route.name === name;
      if (link.hasAttribute("aria-current") !== on) {
        if (on) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
      }
    }
  }

  /** The ids of the folders folded shut (a fresh Set each time). */
  get collapsed() { return new Set(uiChoices().folded_folders); }

  /** A folder: its name folds the group open or shut (remembered), ⋯ holds its actions. */
  _folder(folder, chats, current) {
    const open = !this.collapsed.has(folder.id);
    const bodyId = `folder-body-${folder.id}`;
    const focusKey = `folder:${folder.id}`;
    const toggle = h("button", {
      type: "button", class: "folder-toggle", "aria-expanded": String(open), "aria-controls": bodyId,
      dataset: { focusKey },
      onclick: () => {
        const folded = this.collapsed;
        if (open) folded.add(folder.id); else folded.delete(folder.id);
        saveUiChoices({ folded_folders: [...folded] });  // kept by the server (ui-choices.js)
        this.render();
      },
    }, h("span", { class: `folder-caret i i-caret${open ? "" : " closed"}`, "aria-hidden": "true" }),
    h("span", { class: "folder-name" }, folder.name));
    const menuKey = `folder:${folder.id}`;
    const menuBtn = h("button", {
      type: "button", class: "ghost icon-btn folder-menu", "aria-label": `Options for folder ${folder.name}`, "aria-haspopup": "menu",
      "aria-expanded": this.menuFor === menuKey ? "true" : "false", dataset: { focusKey: `${focusKey}:menu` },
      onclick: (e) => { e.stopPropagation(); this.menuFor = this.menuFor === menuKey ? null : menuKey; this.render(); },
    }, "⋯");
    const head = h("div", { class: "folder-head", dataset: { folderId: folder.id } }, toggle, menuBtn);
    if (this.menuFor === menuKey) {
      const close = (then) => { this.menuFor = null; this.render(); menuBtn.isConnected ? menuBtn.focus() : this._focusKey(`${focusKey}:menu`); then?.(); };
      const menu = h("div", { class: "menu", role: "menu", "aria-label": `Folder ${folder.name}` },
        h("button", { type: "button", role: "menuitem", onclick: () => close(() => this.actions.newChatInFolder(folder.id)) }, "New chat in this folder"),
        h("button", { type: "button", role: "menuitem", onclick: () => close(() => this.actions.editFolder(folder.id)) }, "Rename and defaults…"),
        h("button", { type: "button", role: "menuitem", onclick: () => close(() => this.actions.exportFolder(folder.id)) }, "Export settings…"),
        h("button", { type: "button", role: "menuitem", class: "danger-text", onclick: () => close(() => this.actions.deleteFolder(folder.id)) }, "Delete folder…"));
      menuKeys(menu, () => close());
      head.append(menu);
      queueMicrotask(() => menu.querySelector("button")?.focus());
    }
    const body = h("div", { class: "folder-body", id: bodyId, role: "group", "aria-label": folder.name, hidden: !open },
      open ? (chats.length ? chats.map((c) => this._item(c, current)) : h("p", { class: "hint folder-empty" }, "No chats here yet.")) : null);
    return h("div", { class: "folder", dataset: { folderId: folder.id, dropFolder: folder.id } }, head, body);
  }

  /** Chats drag onto a folder ([data-drop-folder] = its id) or onto the loose chats ("" = no folder). */
  _dragAndDrop() {
    const zoneOf = (e) => (this.dragging ? e.target.closest?.("[data-drop-folder]") : null);
    const mark = (zone) => {
      for (const el of this.list.querySelectorAll(".drop-over")) if (el !== zone) el.classList.remove("drop-over");
      zone?.classList.add("drop-over");
    };
    this.list.addEventListener("dragstart", (e) => {
      const row = e.target.closest?.(".chat-item");
      if (!row || row.classList.contains("renaming")) return;
      this.dragging = row.dataset.id;
      e.dataTransfer.effectAllowed = "move";
      // The link's address too, so a drop outside the list behaves like dragging the link.
      e.dataTransfer.setData("text/uri-list", row.querySelector(".chat-link")?.href || "");
      row.classList.add("dragging");
    });
    this.list.addEventListener("dragover", (e) => {
      const zone = zoneOf(e);
      if (!zone) return mark(null);
      e.preventDefault(); // this is a drop target
      e.dataTransfer.dropEffect = "move";
      mark(zone);
    });
    this.list.addEventListener("dragleave", (e) => {
      if (!this.list.contains(e.relatedTarget)) mark(null);
    });
    this.list.addEventListener("drop", (e) => {
      const zone = zoneOf(e);
      const id = this.dragging;
      mark(null);
      if (!zone) return;
      e.preventDefault();
      this.dragging = null;
      this.actions.fileChat(id, zone.dataset.dropFolder || null);
    });
    this.list.addEventListener("dragend", () => {
      this.dragging = null;
      mark(null);
      for (const el of this.list.querySelectorAll(".chat-item.dragging")) el.classList.remove("dragging");
    });
  }

  _focusKey(key) {
    this.list.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.focus();
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
    // A reply waits for the person's approval: a mark of its own, besides the running one.
    if (chat.awaiting_approval) marks.push(h("span", { class: "mark attention", role: "img", title: "Waiting for your approval", "aria-label": "needs your approval" }, "!"));
    if (chat.awaiting_answer) marks.push(h("span", { class: "mark attention", role: "img", title: "Waiting for your answer", "aria-label": "asks you a question" }, "?"));
    if (chat.running) marks.push(h("span", { class: "mark running", role: "img", title: "A reply is being written", "aria-label": "running" }));
    else if (chat.unread) marks.push(h("span", { class: "mark unread", role: "img", title: "New reply", "aria-label": "unread" }));
    const link = h("a", {
      class: "chat-link", href: `#/c/${encodeURIComponent(chat.id)}`,
      "aria-current": chat.id === current ? "page" : null, tabindex: -1,
      "aria-keyshortcuts": "ArrowUp ArrowDown Enter F2 Delete",
    }, chat.pinned ? h("span", { class: "pin i i-pin", role: "img", "aria-label": "pinned" }) : null, h("span", { class: "chat-name" }, title), ...marks);
    const menuBtn = h("button", {
      type: "button", class: "ghost icon-btn item-menu", "aria-label": `Options for ${title}`, "aria-haspopup": "menu", tabindex: -1,
      "aria-expanded": this.menuFor === chat.id ? "true" : "false",
      onclick: (e) => { e.stopPropagation(); this.menuFor = this.menuFor === chat.id ? null : chat.id; this.render(); },
    }, "⋯");
    const item = h("div", { class: `chat-item${chat.unread ? " is-unread" : ""}${chat.id === current ? " current" : ""}`, dataset: { id: chat.id }, draggable: "true" }, link, menuBtn);
    if (this.menuFor === chat.id) {
      const close = () => { this.menuFor = null; this.render(); };
      // Menu items that open a sheet close the menu first, with focus back on the row,
      // so the sheet hands focus back there when it closes.
      const then = (fn) => () => { close(); this.list.querySelector(`.chat-item[data-id="${CSS.escape(chat.id)}"] .chat-link`)?.focus(); fn(); };
      const menu = h("div", { class: "menu", role: "menu", "aria-label": `Chat ${title}` },
        h("button", { type: "button", role: "menuitem", onclick: () => { this.menuFor = null; this.renaming = chat.id; this.render(); } }, "Rename"),
        h("button", { type: "button", role: "menuitem", onclick: () => { close(); this.actions.pin(chat.id, !chat.pinned); } }, chat.pinned ? "Unpin" : "Pin"),
        h("button", { type: "button", role: "menuitem", onclick: then(() => this.actions.moveChat(chat.id)) }, "Move to folder…"),
        h("button", { type: "button", role: "menuitem", onclick: () => { close(); this.actions.archive(chat.id, true); } }, "Archive"),
        h("button", { type: "button", role: "menuitem", class: "danger-text", onclick: () => { close(); this.actions.remove(chat.id); } }, "Delete"));
      menuKeys(menu, () => { close(); menuBtn.focus(); });
      item.append(menu);
      queueMicrotask(() => menu.querySelector("button")?.focus());
    }
    return item;
  }

  closeMenu() {
    if (this.menuFor) { this.menuFor = null; this.render(); }
  }
}
