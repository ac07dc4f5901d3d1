// The app-wide event socket (/ws/_app): chat-level changes of every chat — a reply
// starting or ending, unread, titles, renames, pins, deletes — so the chat list stays
// live for chats that are not open. One per window, for the page's whole life.
// Reconnects use a one-shot timer with backoff (as socket.js), never an interval, and
// the server's own WebSocket pings keep it alive: an idle page runs no timers.

import { shutDown } from "./socket.js";

const MAX_DELAY_MS = 15000;

export class AppSocket {
  /**
   * @param {{onReady(), onFrame(frame), shouldStop?(): boolean}} hooks
   *   onReady: the server subscribed this socket (first connect and every reconnect);
   *            changes made before it may have been missed, so the list is read again.
   *   onFrame: chat_changed / chat_removed / resync.
   *   shouldStop: true once retrying is pointless (signed out).
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.closed = false;
    this._onOnline = () => this._reconnectNow();
    window.addEventListener("online", this._onOnline);
    this._connect();
  }

  _connect() {
    if (this.closed) return;
    this.timer = null;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws/_app`);
    this.ws = ws;
    ws.onmessage = (msg) => {
      let frame;
      try { frame = JSON.parse(msg.data); } catch { return; }
      if (!frame || typeof frame !== "object") return;
      if (frame.type === "ready") {
        this.attempt = 0;
        this.hooks.onReady();
      } else if (frame.type !== "pong" && frame.type !== "error") {
        this.hooks.onFrame(frame);
      }
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed || this.hooks.shouldStop?.()) return;
      this._schedule();
    };
  }

  _schedule() {
    // 0.5 s, 1 s, 2 s … up to 15 s, with jitter so many windows do not stampede.
    const base = Math.min(MAX_DELAY_MS, 500 * 2 ** this.attempt);
    this.attempt += 1;
    this.timer = setTimeout(() => this._connect(), base * (0.75 + Math.random() * 0.5));
  }

  _reconnectNow() {
    if (this.closed || this.ws) return;
    clearTimeout(this.timer);
    this._connect();
  }

  close() {
    shutDown(this);
  }
}
