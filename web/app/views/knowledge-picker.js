// Which knowledge bases a chat or a folder searches (`knowledge_ids`, CONTRACT §8): the
// Knowledge button by the composer opens a popover of the bases, each a checkbox saved at
// once (PATCH /api/chats/{id}). A chat whose list is null follows its folder's (CONTRACT §12):
// the folder's bases show checked, and changing a box gives the chat a list of its own, which
// "Use the folder's" gives up again. The folder's sheet has the same boxes (saved with the sheet).
// Base names are the person's own text: set as text. Keyboard: Esc closes the popover and
// gives focus back to the button; leaving the popover closes it.
import { h } from "../dom.js";
import { ComposerPopover } from "./composer-popover.js";
import { get, patch } from "../api.js";
import { app } from "../store.js";

const enc = encodeURIComponent;
let seq = 0;

function ids(value) {
  return Array.isArray(value) ? value.filter((x) => typeof x === "string") : [];
}

/** No bases yet: where to make one. */
function noBases() {
  return h("p", { class: "hint kb-none" }, "No knowledge bases yet. Make one in ",
    h("a", { href: "#/settings/knowledge" }, "Settings → Knowledge"), ".");
}

/**
 * Checkboxes over the bases, `chosen` checked; `onChange(list)` gets the ids checked, in the bases' order.
 */
function baseBoxes(bases, chosen, { onChange, label }) {
  const n = ++seq;
  const boxes = bases.map((b, i) => {
    const id = `kb-pick-${n}-${i}`;
    const box = h("input", { type: "checkbox", id, class: "kb-pick", checked: chosen.includes(b.id),
      dataset: { id: b.id }, "aria-describedby": `${id}-about` });
    box.addEventListener("change", () => onChange(boxes.filter((x) => x.checked).map((x) => x.dataset.id)));
    const about = b.status === "indexing" ? "being read" : `${b.documents} document${b.documents === 1 ? "" : "s"}`;
    return Object.assign(box, { row: h("li", { class: "kb-pick-row" }, box,
      h("label", { for: id }, b.name), h("span", { class: "hint", id: `${id}-about` }, ` ${about}`)) });
  });
  return h("ul", { class: "kb-pick-list", role: "group", "aria-label": label }, ...boxes.map((b) => b.row));
}

/**
 * The Knowledge button and its popover, by the composer of an open chat.
 * @param opts {{session(): ChatSession|null}}
 */
export class KnowledgePopover extends ComposerPopover {
  constructor(opts) {
    const count = h("span", { class: "kb-count" });
    super({ label: "Knowledge bases for this chat", title: "Knowledge bases this chat searches", buttonClass: "kb-btn",
      popupClass: "kb-popup", pickerClass: "kb-picker", buttonContent: [h("span", {}, "Knowledge"), count] });
    this.opts = opts;
    this.count = count;
    this.body = h("div", { class: "kb-pick-body" });
    this.error = h("p", { class: "field-error", role: "alert" });
    this.popup.append(h("div", { class: "tools-popup-head" }, h("strong", {}, "Knowledge bases for this chat")),
      h("p", { class: "hint" }, "The model can search these and cite what it finds."), this.body, this.error);
    this.saving = Promise.resolve();
    this.update();
  }

  _chat() { return this.opts.session()?.chat || null; }

  _folder() {
    const chat = this._chat();
    return chat?.folder_id ? app.folders?.find((f) => f.id === chat.folder_id) || null : null;
  }

  /** The bases the chat searches: its own list when it has one, else its folder's. */
  _searched() {
    const own = this._chat()?.knowledge_ids;
    return Array.isArray(own) ? ids(own) : ids(this._folder()?.knowledge_ids);
  }

  /** The button says how many bases the chat searches. */
  update() {
    const n = this._searched().length;
    const text = n ? ` ${n}` : "";
    if (this.count.textContent !== text) this.count.textContent = text;
    const label = n ? `Knowledge bases for this chat (${n} searched)` : "Knowledge bases for this chat";
    if (this.button.getAttribute("aria-label") !== label) this.button.setAttribute("aria-label", label);
    this.button.classList.toggle("accent", n > 0);
  }

  canOpen() { return !!this._chat(); }

  async opened() {
    this.error.textContent = "";
    this.body.replaceChildren(h("p", { class: "hint", role: "status" }, "Loading…"));
    try {
      const { items } = await get("/api/knowledge");
      if (!this.isOpen) return;
      this._draw(items);
      if (document.activeElement === this.popup) this.popup.querySelector("input:not(:disabled), a")?.focus();
    } catch (err) {
      this.body.replaceChildren();
      this.error.textContent = `The knowledge bases could not be read: ${err.message}`;
    }
  }

  _draw(bases) {
    if (!bases.length) { this.body.replaceChildren(noBases()); return; }
    const boxes = baseBoxes(bases, this._searched(), { label: "Knowledge bases", onChange: (list) => this._save(list) });
    this.note = h("div", {});
    this._drawNote();
    this.body.replaceChildren(this.note, boxes);
  }

  /** Whether the chat follows its folder's list or has its own (redrawn alone, so focus stays on a box). */
  _drawNote() {
    const folder = this._folder();
    if (!this.note) return;
    if (!folder) { this.note.replaceChildren(); return; }
    const follows = !Array.isArray(this._chat()?.knowledge_ids);
    this.note.replaceChildren(follows
      ? h("p", { class: "hint kb-follows" }, `Following folder “${folder.name}”. Changing a box gives this chat its own list.`)
      : h("p", { class: "hint kb-follows" }, "This chat has its own list. ",
        // Focus moves to the popover first: the button is redrawn away, which would close it.
        h("button", { type: "button", class: "link", onclick: () => { this.popup.focus(); this._save(null, true); } },
          `Use folder “${folder.name}”’s`)));
  }

  /** Saves run one after another, so the last box changed is what stays; `redraw` after null (the folder's). */
  _save(list, redraw = false) {
    const s = this.opts.session();
    if (!s) return;
    this.error.textContent = "";
    this.saving = this.saving.then(async () => {
      try {
        const chat = await patch(`/api/chats/${enc(s.chatId)}`, { knowledge_ids: list });
        if (chat && app.session === s) s.setChat({ ...s.chat, ...chat });
        this.update();
        if (redraw && this.isOpen) this._draw((await get("/api/knowledge")).items);
        else this._drawNote();
      } catch (err) {
        this.error.textContent = err.fields?.knowledge_ids || err.message;
      }
    });
  }
}

/**
 * The folder sheet's knowledge bases (read from GET /api/knowledge); saved with the sheet.
 * `list()` is the knowledge_ids to save, or undefined while nothing was changed.
 */
export function folderKnowledge(folder) {
  let changed;
  const body = h("div", {}, h("p", { class: "hint", role: "status" }, "Loading…"));
  const box = h("fieldset", { class: "field folder-knowledge" }, h("legend", {}, "Knowledge bases"),
    h("p", { class: "hint" }, "Chats in this folder search these, unless a chat chooses its own."), body);
  get("/api/knowledge").then(({ items }) => {
    body.replaceChildren(items.length ? baseBoxes(items, ids(folder?.knowledge_ids), {
      label: "Knowledge bases its chats search", onChange: (list) => { changed = list; },
    }) : noBases());
  }, (err) => body.replaceChildren(h("p", { class: "field-error" }, `The knowledge bases could not be read: ${err.message}`)));
  return { el: box, list: () => changed };
}
