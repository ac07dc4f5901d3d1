// Reads what the open chat's next request would carry (`/context`, CONTRACT §6) for the
// context meter: counted with what is in the message box (POST, with the draft and the
// attached files) or as the chat stands (GET). Typing asks after a pause, never per
// keystroke; one read at a time, and an answer overtaken by a newer ask is dropped.
import { get, post } from "./api.js";

export class ContextReader {
  /**
   * @param chatId the chat
   * @param draft () => {draft: string, file_ids: string[]}: what the message box holds now
   * @param hooks {{onRead(ctx), onError(err)}}
   */
  constructor(chatId, draft, hooks) {
    this.path = `/api/chats/${encodeURIComponent(chatId)}/context`;
    this.draft = draft;
    this.hooks = hooks;
    this.timer = 0;
    this.reading = false;
    this.again = false;
    this.closed = false;
  }

  /** Read again now, or `wait` ms after the last of a run of calls (typing). */
  refresh(wait = 0) {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.closed) return;
    if (wait > 0) { this.timer = setTimeout(() => this.refresh(0), wait); return; }
    if (this.reading) { this.again = true; return; }
    this._read();
  }

  async _read() {
    this.reading = true;
    try {
      do {
        this.again = false;
        const { draft, file_ids: files } = this.draft();
        let ctx;
        try {
          ctx = draft || files.length ? await post(this.path, { draft, file_ids: files }) : await get(this.path);
        } catch (err) {
          if (!this.again && !this.closed) this.hooks.onError(err);
          continue;
        }
        // Asked again meanwhile (more typing, a turn's end): only the newest answer is shown.
        if (!this.again && !this.closed) this.hooks.onRead(ctx);
      } while (this.again && !this.closed);
    } finally {
      this.reading = false;
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
