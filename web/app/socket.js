// One WebSocket per open chat. It resumes from the state's lastEventId on every
// (re)connect, so a dropped socket loses nothing: the server replays what we missed.
// Reconnects use a one-shot timer with backoff, never an interval, and stop when
// the chat is closed, so an idle page does no work.

const CLOSE_UNKNOWN_CHAT = 4404;
const MAX_DELAY_MS = 15000;

export class ChatSocket {
  /**
   * @param {string} chatId
   * @param {{onEvent(e), onStatus(s), lastEventId(): number, onGone()}} hooks
   */
  constructor(chatId, hooks) {
    this.chatId = chatId;
    this.hooks = hooks;
    this.ws = null;
    this.outbox = []; // frames written while disconnected; flushed after resume
    this.attempt = 0;
    this.timer = null;
    this.closed = false;
    this.status = "connecting";
    this._onOnline = () => this._reconnectNow();
    window.addEventListener("online", this._onOnline);
    this._connect();
  }

  _setStatus(s) {
    this.status = s;
    this.hooks.onStatus?.(s, this.attempt);
  }

  _connect() {
    if (this.closed) return;
    this.timer = null;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    // The resume point travels in the URL, so the server replays before it sends
    // anything live: a resume frame would leave a window where live events overtake it.
    const after = this.hooks.lastEventId() || 0;
    const epoch = this.hooks.epoch?.() || "";
    const query = `after_event_id=${after}` + (epoch ? `&epoch=${encodeURIComponent(epoch)}` : "");
    const ws = new WebSocket(`${scheme}//${location.host}/ws/${encodeURIComponent(this.chatId)}?${query}`);
    this.ws = ws;
    this._setStatus(this.attempt ? "reconnecting" : "connecting");
    ws.onopen = () => {
      this.attempt = 0;
      this._setStatus("open");
      const pending = this.outbox;
      this.outbox = [];
      for (const frame of pending) ws.send(JSON.stringify(frame));
    };
    ws.onmessage = (msg) => {
      let event;
      try { event = JSON.parse(msg.data); } catch { return; }
      if (event && typeof event === "object" && event.type !== "pong") this.hooks.onEvent(event);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      if (ev.code === CLOSE_UNKNOWN_CHAT) {
        this.closed = true;
        this._setStatus("gone");
        this.hooks.onGone?.();
        return;
      }
      this._schedule();
    };
  }

  _schedule() {
    // 0.5 s, 1 s, 2 s … up to 15 s, with jitter so many windows do not stampede.
    const base = Math.min(MAX_DELAY_MS, 500 * 2 ** this.attempt);
    this.attempt += 1;
    this._setStatus("reconnecting");
    this.timer = setTimeout(() => this._connect(), base * (0.75 + Math.random() * 0.5));
  }

  _reconnectNow() {
    if (this.closed || this.ws) return;
    clearTimeout(this.timer);
    this._connect();
  }

  /** Send a frame now, or after the next resume if the socket is down. */
  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(frame));
    } else {
      this.outbox.push(frame);
      this._reconnectNow();
    }
  }

  close() {
    shutDown(this);
  }
}

/** Stop a reconnecting socket for good: no retry timer, no "online" wake-up, closed cleanly. */
export function shutDown(owner) {
  owner.closed = true;
  clearTimeout(owner.timer);
  window.removeEventListener("online", owner._onOnline);
  if (owner.ws) {
    const ws = owner.ws;
    owner.ws = null;
    ws.close(1000);
  }
}
