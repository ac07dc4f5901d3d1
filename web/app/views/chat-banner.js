// A strip under the chat header, outside the chat view's own code (chat.js): for a new
// chat, how it will start — in which folder, temporary or not; for an open chat, a
// notice when it is temporary (with “Keep this chat”) or archived (with “Unarchive”).
import { h } from "../dom.js";
import { app } from "../store.js";

export class ChatBanner {
  /**
   * @param view    a ChatView (its session is null for a new chat)
   * @param actions {{setDraft(changes), keep(id), archive(id, archived)}}
   */
  constructor(view, actions) {
    this.view = view;
    this.actions = actions;
    this.el = h("div", { class: "chat-banner" });
    view.el.insertBefore(this.el, view.scroller);
    this.key = null;
  }

  render() {
    const s = this.view.session;
    const chat = s?.chat;
    const folder = !s && app.draft.folderId ? app.folders.find((f) => f.id === app.draft.folderId) : null;
    const key = s ? `chat|${chat?.id}|${chat?.temporary}|${chat?.archived}`
      : `draft|${folder?.id}|${folder?.name}|${app.draft.temporary}|${app.models.length}`;
    if (key === this.key) return;
    this.key = key;
    this.el.replaceChildren(...(s ? this._chatNotice(chat) : this._draft(folder)));
  }

  _draft(folder) {
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
    return [h("div", { class: "draft-bar" }, ...parts)];
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
