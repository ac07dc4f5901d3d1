// The message box. Enter sends, Shift+Enter is a newline, Esc stops a running reply.
// While a reply runs, sending queues the message (the server keeps the order) and
// the waiting messages show as chips with ✕ to drop one.
import { h } from "../dom.js";

export class Composer {
  /** @param hooks {{send(text): boolean, stop(), discard(messageId)}} */
  constructor(hooks) {
    this.hooks = hooks;
    this.input = h("textarea", {
      class: "composer-input", rows: 1, placeholder: "Message Numi…  (Enter to send, Shift+Enter for a new line)",
      "aria-label": "Message", spellcheck: true,
      oninput: () => this._fit(),
      onkeydown: (e) => this._key(e),
    });
    this.sendBtn = h("button", { type: "button", class: "primary send-btn", "aria-label": "Send message", onclick: () => this._send() }, "Send");
    this.stopBtn = h("button", { type: "button", class: "danger stop-btn", "aria-label": "Stop the reply (Esc)", hidden: true, onclick: () => this.hooks.stop() }, "Stop");
    // A list, so the label is read (a name on a plain div is ignored) with the count.
    this.queue = h("div", { class: "queue", role: "list", hidden: true, "aria-label": "Queued messages" });
    this.note = h("div", { class: "composer-note" });
    this.el = h("div", { class: "composer" }, this.queue,
      h("div", { class: "composer-box" }, this.input, h("div", { class: "composer-buttons" }, this.stopBtn, this.sendBtn)),
      this.note);
    this.queueKey = "";
    // The hint in the empty box wraps when the box narrows (200 % zoom, or Stop showing
    // beside Send), and a one-row box would cut its second line in half: fit the height
    // again whenever the width changes. Only on a change, so an idle page does nothing.
    if (typeof ResizeObserver === "function") {
      let width = 0;
      new ResizeObserver(([entry]) => {
        if (entry.contentRect.width === width) return;
        width = entry.contentRect.width;
        this._fit();
      }).observe(this.input);
    }
  }

  _fit() {
    // Grow with the text up to a limit; one layout read per keystroke.
    this.input.style.height = "auto";
    this.input.style.height = Math.min(this.input.scrollHeight, window.innerHeight * 0.4) + "px";
  }

  _key(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey) {
      e.preventDefault();
      this._send();
    } else if (e.key === "Escape" && this.running) {
      e.preventDefault();
      this.hooks.stop();
    }
  }

  _send() {
    const text = this.input.value;
    if (!text.trim() || this.disabled) return;
    if (this.hooks.send(text) !== false) {
      this.input.value = "";
      this._fit();
    }
  }

  focus() { this.input.focus(); }

  /** opts: {running, queue: [{message_id, preview}], disabled, note} */
  update({ running, queue, disabled, note }) {
    this.running = running;
    this.disabled = !!disabled;
    this.stopBtn.hidden = !running;
    this.sendBtn.textContent = running ? "Queue" : "Send";
    this.sendBtn.setAttribute("aria-label", running ? "Queue message (it is sent after the running reply)" : "Send message");
    this.sendBtn.disabled = this.disabled;
    this.input.disabled = this.disabled;
    if (this.note.textContent !== (note || "")) this.note.textContent = note || "";
    const key = (queue || []).map((q) => q.message_id).join(",");
    if (key !== this.queueKey) {
      this.queueKey = key;
      this.queue.hidden = !queue?.length;
      this.queue.replaceChildren(...(queue || []).map((q) => h("span", { class: "queue-chip", role: "listitem" },
        h("span", { class: "queue-text", title: q.preview }, "Queued: " + q.preview),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Remove queued message: ${q.preview}`, onclick: () => this.hooks.discard(q.message_id) }, "✕"))));
    }
  }
}
