// The chat's header: its title and connection, the chat's usage total, the mark of
// settings that change its replies, its workspace, Chat settings, and the ⋯ menu (Summarize
// now, Inspect request).
import { h } from "../dom.js";
import { get } from "../api.js";
import { activeSettings, usageSummary } from "../../js/chat-marks.js";
import { Inputs } from "../../js/view-inputs.js";
import { menuKeys } from "./menu.js";

/** The last part of a folder path, whatever the system's separator. */
export function folderName(path) {
  const parts = String(path).replace(/[\\/]+$/, "").split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** What the usage total depends on: read again whenever a turn has ended (or the history changed); null while one runs. */
function usageKey(s) {
  const st = s?.loaded && !s.running ? s.state : null;
  if (!st) return null;
  const last = st.messages[st.messages.length - 1];
  return `${s.chatId}|${st.messages.length}|${last?.id}|${last?.status}|${st.turn?.status}`;
}

export class ChatHeader {
  /**
   * @param session a ChatSession, or null for a new chat not saved yet
   * @param actions {{openChatSettings(), openSidebar(), inspect(), summarize(), stopSummary()}}
   */
  constructor(session, actions) {
    this.session = session;
    this.actions = actions;
    this.title = h("h1", { class: "chat-title", id: "chat-title" });
    this.status = h("span", { class: "conn", role: "status" });
    // The chat's workspace folder (file tools and the shell reach only it): its name, the
    // whole path in the title; a click opens the chat settings where it is chosen.
    this.workspace = h("button", { type: "button", class: "ghost workspace-chip", hidden: true, onclick: () => actions.openChatSettings() });
    // Settings that change this chat's replies (named in its label), and what it has used.
    this.settingsMark = h("button", { type: "button", class: "ghost settings-mark", hidden: true, onclick: () => actions.openChatSettings() }, "Custom");
    this.usage = h("span", { class: "chat-usage", hidden: true });
    // The chat's ⋯ menu: what is done to its context (Summarize now, Inspect request).
    this.moreBtn = h("button", { type: "button", class: "ghost icon-btn chat-more", "aria-label": "More for this chat: summarize, inspect the next request",
      "aria-haspopup": "menu", "aria-expanded": "false", onclick: () => this._menu(!this.menuEl) }, "⋯");
    this.more = h("div", { class: "chat-more-wrap", hidden: !session }, this.moreBtn);
    this.el = h("header", { class: "chat-header" },
      h("button", { type: "button", class: "ghost icon-btn only-narrow drawer-toggle", "aria-label": "Show chats", "aria-controls": "sidebar", "aria-expanded": "false", onclick: () => actions.openSidebar() }, h("span", { class: "i i-menu", "aria-hidden": "true" })),
      this.title, this.status, h("span", { class: "spacer" }), this.usage, this.settingsMark, this.workspace,
      h("button", { type: "button", class: "ghost", "aria-label": "Chat settings: system prompt, temperature, reasoning, workspace, tool approvals", onclick: () => actions.openChatSettings(), hidden: !session }, "Chat settings"),
      this.more);
    this.inputs = new Inputs({
      title: ({ s }) => s?.title || "",
      chat: ({ s }) => s?.chat,
      connection: ({ s }) => s?.connection,
      loaded: ({ s }) => !!s?.loaded,
      usageKey: ({ s }) => usageKey(s),
    });
  }

  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return;
    const title = inp.title || "New chat";
    if (this.title.textContent !== title) this.title.textContent = title;
    const docTitle = inp.title ? `${inp.title} — Numi` : "Numi";
    if (document.title !== docTitle) document.title = docTitle;
    this._drawWorkspace(inp.chat?.workspace || "");
    this._drawMarks(inp.chat, inp.usageKey);
    const conn = inp.connection;
    const status = !this.session || conn === "open" || !inp.loaded ? ""
      : conn === "reconnecting" ? "Reconnecting…" : conn === "gone" ? "This chat was deleted" : "Connecting…";
    if (this.status.textContent !== status) this.status.textContent = status;
  }

  /** The settings mark, and the usage total read again when its key changed. */
  _drawMarks(chat, key) {
    const active = activeSettings(chat).join(" · ");
    if (active !== (this.settingsMark.title || "")) {
      this.settingsMark.hidden = !active;
      this.settingsMark.title = active;
      this.settingsMark.setAttribute("aria-label", `Chat settings in effect: ${active}. Change them in the chat settings`);
    }
    if (!key || key === this.usageKey) return;
    this.usageKey = key;
    get(`/api/chats/${encodeURIComponent(this.session.chatId)}/usage`).then((usage) => {
      if (this.usageKey !== key) return; // a newer read is on its way
      const { text, title } = usageSummary(usage);
      this.usage.hidden = !text;
      this.usage.textContent = text;
      this.usage.title = title;
    }, () => { /* the total waits for the next turn; the chat itself is unaffected */ });
  }

  _drawWorkspace(path) {
    if (path === this.workspacePath) return;
    this.workspacePath = path;
    this.workspace.hidden = !path;
    if (!path) return;
    const name = folderName(path);
    this.workspace.replaceChildren(h("span", { class: "i i-folder", "aria-hidden": "true" }), " ", name);
    this.workspace.title = path;
    this.workspace.setAttribute("aria-label", `Workspace: ${name} (${path}). Change it in the chat settings`);
  }

  /** Open or close the ⋯ menu; closed, focus goes back to its button when it was inside. */
  _menu(open) {
    if (!open) {
      if (!this.menuEl) return;
      const inside = this.menuEl.contains(document.activeElement);
      this.menuEl.remove();
      this.menuEl = null;
      document.removeEventListener("pointerdown", this.menuOutside, true);
      this.moreBtn.setAttribute("aria-expanded", "false");
      if (inside) this.moreBtn.focus();
      return;
    }
    const pick = (fn) => () => { this._menu(false); fn(); };
    const busy = !!this.session?.compacting;
    this.menuEl = h("div", { class: "menu", role: "menu", "aria-label": "This chat" },
      // Under way, the same item stops it: the chat's stop cancels its summary (the request then
      // answers with the server's sentence, which the toast shows).
      h("button", { type: "button", role: "menuitem", onclick: pick(() => (busy ? this.actions.stopSummary() : this.actions.summarize())) },
        busy ? "Stop summarizing" : "Summarize now"),
      h("button", { type: "button", role: "menuitem", onclick: pick(() => this.actions.inspect()) }, "Inspect request…"));
    menuKeys(this.menuEl, () => this._menu(false));
    this.menuOutside = (e) => { if (!this.more.contains(e.target)) this._menu(false); };
    document.addEventListener("pointerdown", this.menuOutside, true);
    this.more.append(this.menuEl);
    this.moreBtn.setAttribute("aria-expanded", "true");
    this.menuEl.querySelector("button:not(:disabled)")?.focus();
  }
}
