// A chat's unsent message kept by the server (GET/PUT/DELETE /api/chats/{id}/draft,
// docs/PROTOCOL.md "Drafts"), so it survives switching chats, reloading and restarting;
// and the new chat's, kept in memory only (it has no chat to keep it in yet).
import { get, del, put } from "./api.js";

/** How long after the last key a typed draft is saved. */
export const SAVE_PAUSE_MS = 500;

const EMPTY = JSON.stringify({ text: "", file_ids: [] });
const live = new Set(); // the keepers of views on screen, saved when the page goes away
// Saves under way, by path: a chat opened again reads its draft after the save made on leaving it.
const saving = new Map();

/** What is saved of a draft ({text, files: [stored file]}), as a comparable key. */
function keyOf({ text, files }) {
  return JSON.stringify({ text, file_ids: files.map((f) => f.id) });
}

export class DraftKeeper {
  /**
   * @param chatId the chat every save goes to, fixed for the keeper's life: a save begun for
   *   one chat can never land on another, whatever is on screen when it is sent
   * @param read () => {text, files}: what the message box holds now
   */
  constructor(chatId, read) {
    this.path = `/api/chats/${encodeURIComponent(chatId)}/draft`;
    this.read = read;
    this.saved = EMPTY;   // what the server holds, as far as this page knows (null: unknown)
    this.timer = 0;
    this.inFlight = null; // one request at a time, so an older save never lands after a newer one
    this.again = false;   // the box changed while a request was out: save once it is back
    this.dropAfter = false;
    this.closed = false;
    live.add(this);
  }

  /** The saved draft ({text, files}), or null when there is none or it could not be read. */
  async load() {
    try {
      for (let p; (p = saving.get(this.path));) await p;
      const d = await get(this.path);
      if (this.closed || (!d.text && !d.files?.length)) return null;
      const draft = { text: d.text, files: d.files || [] };
      this.saved = keyOf(draft);
      return draft;
    } catch {
      return null; // a draft that cannot be read leaves the box empty; typing saves a new one
    }
  }

  /** The box changed: save `wait` ms after the last change (typing), or at once. */
  changed(wait = 0) {
    if (this.closed) return;
    clearTimeout(this.timer);
    if (wait) this.timer = setTimeout(() => this.save(), wait);
    else this.save();
  }

  /**
   * The box's message was sent: the server dropped the draft with it. A save still pending
   * is dropped too; one already on its way may land after the send, so a DELETE follows it.
   */
  sent() {
    clearTimeout(this.timer);
    if (this.inFlight) { this.dropAfter = true; this.again = true; }
    this.saved = EMPTY;
  }

  /** Save what the box holds, if it differs from what the server has. */
  save() {
    clearTimeout(this.timer);
    if (this.inFlight) { this.again = true; return this.inFlight; }
    const draft = this.read();
    const key = keyOf(draft);
    if (key === this.saved) return Promise.resolve();
    this.saved = key;
    const request = key === EMPTY ? del(this.path) : put(this.path, { text: draft.text, file_ids: draft.files.map((f) => f.id) });
    this.inFlight = request.catch(() => {
      this.saved = null; // not known to be saved: the next change, or leaving, tries again
    }).finally(() => {
      if (saving.get(this.path) === this.inFlight) saving.delete(this.path);
      this.inFlight = null;
      if (this.dropAfter) { this.dropAfter = false; this.saved = null; }
      if (this.again) { this.again = false; this.save(); }
    });
    saving.set(this.path, this.inFlight);
    return this.inFlight;
  }

  /** The page is going away: what is not saved yet goes in a request that outlives it. */
  saveOnUnload() {
    clearTimeout(this.timer);
    const draft = this.read();
    const key = keyOf(draft);
    if (key === this.saved && !this.inFlight) return;
    this.saved = key;
    const empty = key === EMPTY;
    fetch(this.path, {
      method: empty ? "DELETE" : "PUT", keepalive: true, credentials: "same-origin",
      headers: empty ? {} : { "Content-Type": "application/json" },
      body: empty ? undefined : JSON.stringify({ text: draft.text, file_ids: draft.files.map((f) => f.id) }),
    }).catch(() => {});
  }

  /** The chat's view is left: save now; nothing more is read from its box after this. */
  close() {
    if (this.closed) return;
    this.save();
    const read = this.read();
    this.read = () => read; // a save still to follow (after one in flight) saves what was left
    this.closed = true;
    live.delete(this);
  }
}

if (typeof window !== "undefined") {
  // pagehide covers reload, closing and navigating away (and the back/forward cache);
  // beforeunload is the older browsers' only chance. Saving twice sends nothing new.
  const unload = () => { for (const k of live) k.saveOnUnload(); };
  window.addEventListener("pagehide", unload);
  window.addEventListener("beforeunload", unload);
}

// The new chat's draft: in memory only, for the page's life (no chat exists to keep it in).
let newChatDraft = null;

/** Keep the new chat's box ({text, files}) while another view is shown; an empty one is forgotten. */
export function keepNewChatDraft(draft) {
  newChatDraft = draft && (draft.text || draft.files.length) ? draft : null;
}

/** The new chat's kept box, or null. */
export function newChatDraftKept() {
  return newChatDraft;
}
