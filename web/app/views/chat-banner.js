// A strip under the chat header, outside the chat view's own code (chat.js): for a new
// chat, how it will start — in which folder, temporary or not, and what that folder (a
// project) applies to it; for an open chat, a notice when it is temporary (with “Keep this
// chat”) or archived (with “Unarchive”).
import { h } from "../dom.js";
import { get } from "../api.js";
import { app, schedule } from "../store.js";
import { charCount, projectSummary } from "../../js/project-summary.js";

// A tooltip shows this much of the folder's instructions; the whole text is a click away.
const TITLE_MAX = 300;
let seq = 0;

export class ChatBanner {
  /**
   * @param view    a ChatView (its session is null for a new chat)
   * @param actions {{setDraft(changes), keep(id), archive(id, archived), editFolder(id)}}
   */
  constructor(view, actions) {
    this.view = view;
    this.actions = actions;
    this.el = h("div", { class: "chat-banner" });
    view.el.insertBefore(this.el, view.scroller);
    this.key = null;
    this.bases = null;       // GET /api/knowledge items, once read (the summary names the folder's bases)
    this.basesAt = -1;       // the app.foldersVersion they were read for
    this.basesRead = 0;
    this.promptOpen = false; // the folder's instructions shown in full
    this.folderModel = undefined;
    this.promptId = `project-prompt-${++seq}`;
  }

  render() {
    const s = this.view.session;
    const chat = s?.chat;
    const folder = !s && app.draft.folderId ? app.folders.find((f) => f.id === app.draft.folderId) : null;
    if (!s) this._followModel(folder);
    const phrases = folder ? projectSummary(folder, { models: app.models, bases: this._bases(folder) }) : [];
    const key = s ? `chat|${chat?.id}|${chat?.temporary}|${chat?.archived}`
      : `draft|${folder?.id}|${folder?.name}|${app.draft.temporary}|${app.models.length}|${app.foldersVersion}|${JSON.stringify(phrases)}`;
    if (key === this.key) return;
    this.key = key;
    this.el.replaceChildren(...(s ? this._chatNotice(chat) : this._draft(folder, phrases)));
  }

  _draft(folder, phrases) {
    if (!app.models.length) return []; // nothing can be sent yet: the composer says why
    const temporary = app.draft.temporary;
    const parts = [];
    if (folder) {
      parts.push(h("span", { class: "chip folder-chip" }, `In folder “${folder.name}”`),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Start this chat outside the folder ${folder.name}`, onclick: () => this.actions.setDraft({ folderId: null }) }, h("span", { class: "i i-close", "aria-hidden": "true" })));
    }
    parts.push(h("button", {
      type: "button", class: `temp-toggle${temporary ? " on" : ""}`, "aria-pressed": String(temporary),
      title: "A temporary chat is kept out of your chat list and search, and deleted when Numi closes.",
      onclick: () => this.actions.setDraft({ temporary: !temporary }),
    }, "Temporary chat"));
    if (temporary) parts.push(h("span", { class: "hint" }, "Not in your chat list or search; deleted when Numi closes."));
    const bar = h("div", { class: "draft-bar" }, ...parts);
    return folder ? [bar, this._project(folder, phrases)] : [bar];
  }

  /** What the folder applies to the new chat (web/js/project-summary.js), and a way to change it. */
  _project(folder, phrases) {
    const edit = h("button", { type: "button", class: "link project-edit", onclick: () => this.actions.editFolder(folder.id) }, "Edit folder…");
    if (!phrases.length) {
      return h("p", { class: "project-summary", role: "note" }, "No project settings yet. ", edit);
    }
    let prompt = null;
    const items = phrases.map((p) => {
      if (p.kind !== "instructions") return h("li", { dataset: { kind: p.kind }, title: p.detail }, p.text);
      // The person's own text: set as text, shown whole below on a click.
      prompt = h("div", { class: "project-prompt", id: this.promptId, hidden: !this.promptOpen }, p.detail);
      const toggle = h("button", {
        type: "button", class: "link project-prompt-toggle", "aria-expanded": String(this.promptOpen), "aria-controls": this.promptId,
        title: charCount(p.detail) > TITLE_MAX ? `${[...p.detail].slice(0, TITLE_MAX).join("")}…` : p.detail,
        onclick: () => {
          this.promptOpen = !this.promptOpen;
          toggle.setAttribute("aria-expanded", String(this.promptOpen));
          prompt.hidden = !this.promptOpen;
        },
      }, p.text);
      return h("li", { dataset: { kind: p.kind } }, toggle);
    });
    return h("div", { class: "project-summary", role: "note" },
      h("span", { class: "project-label" }, "Project settings:"), " ",
      h("ul", { class: "project-items" }, ...items), " ", edit, prompt);
  }

  /** The knowledge bases, read once per change of the folders when the folder names any (null until then). */
  _bases(folder) {
    if (!Array.isArray(folder.knowledge_ids) || !folder.knowledge_ids.length) return null;
    if (this.basesAt !== app.foldersVersion) {
      this.basesAt = app.foldersVersion;
      const n = ++this.basesRead;
      get("/api/knowledge").then(({ items }) => {
        if (n === this.basesRead) { this.bases = items; schedule(); }
      }, () => { /* unread: the summary counts the bases instead of naming them */ });
    }
    return this.bases;
  }

  /**
   * The new chat starts with its folder's model (main.js newChatView): an edit of the folder's
   * model while this screen is open moves it along, unless the person picked another.
   */
  _followModel(folder) {
    const was = this.folderModel;
    this.folderModel = folder?.model_id ?? null;
    if (was === undefined || was === this.folderModel) return;
    if (this.view.draftModel && this.view.draftModel !== was) return;
    this.view.draftModel = app.models.some((m) => m.id === this.folderModel) ? this.folderModel : undefined;
    schedule();
  }

  _chatNotice(chat) {
    if (chat?.temporary) {
      return [h("div", { class: "notice info temp-banner", role: "status" },
        h("span", {}, h("strong", {}, "Temporary chat. "), "It is not in your chat list or search, and it is deleted when Numi closes."),
        h("button", { type: "button", class: "primary keep-chat", onclick: async () => { await this.actions.keep(chat.id); this.view.focus(); } }, "Keep this chat"))];
    }
    if (chat?.archived) {
      return [h("div", { class: "notice info archived-banner", role: "status" },
        h("span", {}, "This chat is archived: it is not in your chat list."),
        h("button", { type: "button", class: "ghost accent", onclick: async () => { await this.actions.archive(chat.id, false); this.view.focus(); } }, "Unarchive"))];
    }
    return [];
  }
}
