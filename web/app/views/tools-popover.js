// Which tools a chat (or a folder's chats) offers the model (CONTRACT §15): the tools button
// by the composer opens a popover of switches, grouped — built-in, then each MCP server with
// its tools — each group with what it costs in every request ("~1.2k tokens", the count the
// context meter's tools part uses). A switch saves at once (PATCH tools_off) and the meter
// reads the context again; a chat that follows its folder says so, and one with its own list
// can go back to the folder's. A tool denied in Settings → Tools & approvals shows off and
// cannot be switched on here. Tool names and descriptions come from MCP servers: text only.
// Keyboard: Esc closes and gives focus back to the button; leaving the popover closes it.
import { h } from "../dom.js";
import { ComposerPopover } from "./composer-popover.js";
import { get, patch } from "../api.js";
import { app } from "../store.js";
import { icon } from "../attachments.js";
import { applyList, baseList, formatCost, offReason, onTopSentence, shortName, switchGroup, switchTool }
  from "../../js/tool-groups.js";

const enc = encodeURIComponent;
// The wrench of the model picker's "Tools" mark (Feather, MIT).
const WRENCH = ["M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z"];

let seq = 0;

/**
 * The grouped switches over one GET …/tools view; used by the popover and the folder's sheet.
 * A change calls `onChange(list)` with the new tools_off list and shows it at once.
 */
export class ToolSwitches {
  /** @param opts {{by: "chat"|"folder", label: string, onChange(list)}} */
  constructor(opts) {
    this.opts = opts;
    this.n = ++seq;
    this.el = h("div", { class: "tool-groups", role: "group", "aria-label": opts.label });
    this.view = null;
    this.list = [];
    this.folderName = "";
  }

  /** Draw a view from the server; its own list (or the folder's it follows) is where changes start. */
  show(view, { folderName = "" } = {}) {
    this.view = view;
    this.list = baseList(view);
    this.folderName = folderName;
    this._draw(view.groups);
  }

  /** Draw `list` as if saved (before the server's answer comes). */
  apply(list) {
    this.list = list;
    this._draw(applyList(this.view.groups, list, this.opts.by));
  }

  _draw(groups) {
    const active = document.activeElement;
    const focusKey = this.el.contains(active) ? active.dataset.key : null;
    this.groups = groups;
    // Chromium blurs a focused switch as it is replaced: `drawing` tells a popover that
    // this focus loss is not the person leaving it.
    this.drawing = true;
    try {
      this.el.replaceChildren(...(groups.length ? groups.map((g, i) => this._group(g, i))
        : [h("p", { class: "hint" }, "No tools to offer.")]));
      if (focusKey) this.el.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
    } finally {
      this.drawing = false;
    }
  }

  _group(g, i) {
    const id = `tg-${this.n}-${i}`;
    const allDenied = g.tools.length > 0 && g.tools.every((t) => t.off_by === "policy");
    const sw = h("input", { type: "checkbox", role: "switch", id, class: "tool-switch", checked: !!g.on, disabled: allDenied,
      dataset: { key: `group:${g.id}` }, "aria-describedby": `${id}-cost`,
      onchange: () => this._changed(switchGroup(this.list, g, sw.checked)) });
    const head = h("div", { class: "tool-group-head" }, sw,
      h("label", { for: id, id: `${id}-name`, class: "tool-group-name" }, g.label),
      h("span", { class: "tool-cost", id: `${id}-cost` }, formatCost(g.tokens)));
    const rows = g.tools.map((t, j) => this._tool(g, t, `${id}-${j}`));
    return h("section", { class: "tool-group", dataset: { group: g.id, on: String(!!g.on) }, "aria-labelledby": `${id}-name` },
      head, rows.length ? h("ul", { class: "tool-list" }, ...rows) : h("p", { class: "hint tool-none" },
        g.server ? "No tools listed yet: Settings → MCP servers → Show tools lists them." : "No tools."));
  }

  _tool(g, t, id) {
    const policy = t.off_by === "policy";
    const why = offReason(t, { folderName: this.folderName });
    const sw = h("input", { type: "checkbox", role: "switch", id, class: "tool-switch", checked: !!t.on, disabled: policy,
      dataset: { key: `tool:${t.name}` }, "aria-describedby": `${id}-about`,
      onchange: () => this._changed(switchTool(this.list, g, t.name, sw.checked)) });
    const about = [why, t.description || ""].filter(Boolean).join(" · ");
    return h("li", { class: "tool-row", dataset: { name: t.name, on: String(!!t.on), offBy: t.off_by || "" } },
      sw,
      h("span", { class: "tool-text" },
        h("label", { for: id, class: "tool-name mono", title: t.name }, shortName(g, t)),
        h("span", { class: "tool-about hint", id: `${id}-about`, title: t.description || "" }, about)),
      h("span", { class: "tool-cost" }, formatCost(t.tokens)));
  }

  _changed(list) {
    this.apply(list);
    this.opts.onChange(list);
  }
}

/**
 * The tools button and its popover, by the composer of an open chat.
 * @param opts {{session(): ChatSession|null, model(): object|null, mode(): string}}
 */
export class ToolsPopover extends ComposerPopover {
  constructor(opts) {
    super({ label: "Tools for this chat", buttonClass: "", popupClass: "", pickerClass: "",
      buttonContent: [icon("tools", WRENCH, "cap-icon"), h("span", {}, "Tools")] });
    this.opts = opts;
    this.source = h("p", { class: "tools-source hint" });
    this.reset = h("button", { type: "button", class: "ghost accent tools-reset", hidden: true, onclick: () => this._reset() },
      "Reset to folder");
    this.onTop = h("p", { class: "tools-on-top", hidden: true });
    this.error = h("p", { class: "field-error tools-error", role: "alert" });
    this.status = h("p", { class: "hint tools-status", role: "status" });
    this.switches = new ToolSwitches({ by: "chat", label: "Tools", onChange: (list) => this._save(list) });
    this.popup.append(h("div", { class: "tools-popup-head" }, h("strong", {}, "Tools for this chat"), this.reset),
      this.source, this.onTop, this.status, this.switches.el, this.error);
    this.saving = Promise.resolve();
    this.pending = 0;
  }

  get chatId() { return this.opts.session()?.chatId || null; }

  canOpen() { return !!this.chatId; }

  redrawing() { return this.switches.drawing; }

  async opened() {
    this.error.textContent = "";
    this.drawOnTop();
    this.status.textContent = "Loading…";
    this.switches.el.hidden = true;
    await this._load();
    // Into the popover once its switches are there: the first one that can change.
    const at = document.activeElement;
    if (this.isOpen && (at === this.popup || !this.popup.contains(at))) {
      (this.popup.querySelector("input.tool-switch:not(:disabled)") || this.popup.querySelector("button:not([hidden])"))?.focus();
    }
  }

  /** The line on what applies on top of the switches (the model's tools off, Plan mode). */
  drawOnTop() {
    const line = onTopSentence({ model: this.opts.model(), mode: this.opts.mode() });
    if (this.onTop.textContent !== line) this.onTop.textContent = line;
    this.onTop.hidden = !line;
  }

  async _load() {
    const id = this.chatId;
    try {
      const view = await get(`/api/chats/${enc(id)}/tools`);
      if (!this.isOpen || id !== this.chatId || this.pending) return;
      this.status.textContent = "";
      this.switches.el.hidden = false;
      this._show(view);
    } catch (err) {
      this.status.textContent = "";
      this.error.textContent = `The tools could not be read: ${err.message}`;
    }
  }

  _folder() {
    const chat = this.opts.session()?.chat;
    return chat?.folder_id ? app.folders.find((f) => f.id === chat.folder_id) || { id: chat.folder_id, name: "" } : null;
  }

  _show(view) {
    const folder = this._folder();
    const name = folder?.name ? `“${folder.name}”` : "";
    this.switches.show(view, { folderName: name });
    const own = view.tools_off !== null && view.tools_off !== undefined;
    this.source.textContent = !folder ? "" : own ? `This chat has its own choice; folder ${name || "its folder"} is not followed.`
      : `Following folder ${name || "its folder"}.`;
    this.source.hidden = !folder;
    this.reset.hidden = !(folder && own);
  }

  /** Save a new list; saves run one after another, so the last switch pressed is what stays. */
  _save(list) {
    this._patch({ tools_off: list });
  }

  _reset() {
    this._patch({ tools_off: null });
    this.switches.el.querySelector("input.tool-switch:not(:disabled)")?.focus();
  }

  _patch(body) {
    const s = this.opts.session();
    if (!s) return;
    this.error.textContent = "";
    this.pending += 1;
    this.saving = this.saving.then(async () => {
      try {
        const chat = await patch(`/api/chats/${enc(s.chatId)}`, body);
        // The session's chat changes: the meter reads the context again (tools cost tokens).
        if (chat && app.session === s) s.setChat({ ...s.chat, ...chat });
      } catch (err) {
        this.error.textContent = err.fields?.tools_off || err.message;
      } finally {
        this.pending -= 1;
      }
      if (!this.pending && this.isOpen) await this._load();
    });
  }
}
