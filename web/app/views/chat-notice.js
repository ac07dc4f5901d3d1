// The notice under the thread: a fallback model answering instead, or an error with Retry
// (Continue after a limit) — unless the failed reply shows the error itself.
import { h } from "../dom.js";
import { app, modelLabel, schedule } from "../store.js";
import { errorText } from "./message.js";
import { shownMessages } from "../../js/history-page.js";
import { Inputs } from "../../js/view-inputs.js";

// Errors that Retry would not help: the person's own stop, a refused frame, a full queue, busy.
const NO_RETRY = new Set(["cancelled", "bad_request", "queue_full", "busy"]);

/** True when the newest reply shows this error itself (with Retry/Continue). */
function replyShows(messages, n) {
  const msgs = messages.filter((m) => m.status !== "queued");
  const last = msgs.findLastIndex((m) => m.role === "assistant");
  return last >= 0 && last > msgs.findLastIndex((m) => m.role === "user") && errorText(msgs[last].error) === n.message;
}

export class ChatNotice {
  /** @param retry () → the failed reply asked again (or continued) */
  constructor(retry) {
    this.retry = retry;
    this.el = h("div", { class: "notice-slot" });
    this.dismissed = null;
    this.retryBtn = null;
    this.inputs = new Inputs({
      notice: ({ state }) => state.notice,
      dismissed: () => this.dismissed,
      running: ({ s }) => s.running,
      models: () => app.models, // the fallback's model names (modelLabel)
      // A failed turn's reply can arrive after its `error` (a turn that failed before the
      // model wrote anything gets its reply row at the end): whether the reply shows the
      // error is part of what is drawn, or the notice would stay as a second copy.
      inReply: ({ state }) => !!state.notice && state.notice.kind === "error" && replyShows(shownMessages(state), state.notice),
    });
  }

  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return;
    const n = inp.notice;
    if (n === this.shown && inp.inReply === this.inReply && inp.dismissed === this.dismissedShown) {
      // The error comes before its turn's end: Retry shows once the turn has ended, the
      // alert itself left alone so it is not read out twice.
      if (this.retryBtn && this.retryBtn.hidden !== inp.running) this.retryBtn.hidden = inp.running;
      return;
    }
    this.shown = n;
    this.inReply = inp.inReply;
    this.dismissedShown = inp.dismissed;
    this.retryBtn = null;
    if (!n || n === inp.dismissed) { this.el.replaceChildren(); return; }
    const dismiss = h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Dismiss",
      onclick: () => { this.dismissed = n; schedule(); } }, h("span", { class: "i i-close", "aria-hidden": "true" }));
    if (n.kind === "fallback") {
      this.el.replaceChildren(h("div", { class: "notice info", role: "status" },
        h("span", {}, `${modelLabel(n.from_model_id)} did not answer, so ${modelLabel(n.to_model_id)} is answering instead.`,
          n.message ? h("span", { class: "hint" }, " " + n.message) : null), dismiss));
      return;
    }
    // The failed reply shows this error itself (with Retry/Continue): no second copy below it.
    if (inp.inReply) {
      // Still said aloud once: the reply's own error line is not a live region.
      this.el.replaceChildren(h("div", { class: "sr-only", role: "alert" }, errorText(n)));
      return;
    }
    if (!NO_RETRY.has(n.code)) {
      // A limit's sentence says "Continue" (a research that found nothing in its time): the button says the same.
      this.retryBtn = h("button", { type: "button", class: "ghost accent", hidden: inp.running, onclick: () => this.retry() },
        n.code === "limit" ? "Continue" : "Retry");
    }
    this.el.replaceChildren(h("div", { class: "notice error", role: "alert" },
      h("span", {}, errorText(n) || "Something went wrong."), this.retryBtn, dismiss));
  }
}
