// One message bubble. It keeps its own DOM and only patches what changed, so a
// streaming reply touches just its own tail (see stream-render.js).
import { h, copyText, replaceChildren } from "../dom.js";
import { StreamRenderer } from "../stream-render.js";
import { ToolCallRow } from "./tool-call.js";
import { modelLabel } from "../store.js";
import { toast } from "./toast.js";
import { fileUrl, formatSize, icon, isImage } from "../attachments.js";
import { ModelPicker } from "./model-picker.js";
import { PlanCard } from "./plan-card.js";
import { planState } from "../../js/plans.js";
import { shownSources, withCitedSources } from "../../js/citations.js";
import { SourceList, linkCitations } from "./sources.js";
import { MessageImages } from "./message-images.js";
import { reader } from "../read-aloud.js";

const CUT_OFF = new Set(["interrupted", "cancelled", "error"]);
// A reply a limit ended (its steps, tool calls or time; the loop guard) goes on with Continue.
const LIMITS = new Set(["limit", "loop_detected"]);
const STATUS_TEXT = {
  streaming: "writing…", queued: "queued", cancelled: "stopped", interrupted: "interrupted", error: "failed",
};

function setIf(target, key, value) {
  if (target[key] !== value) target[key] = value;
}

export function errorText(error) {
  if (!error) return "";
  if (typeof error === "string") return error;
  return error.message || error.code || JSON.stringify(error);
}

function usageChips(u) {
  if (!u) return [];
  const chips = [];
  const est = u.estimated ? "≈" : "";
  if (u.input_tokens || u.output_tokens) {
    chips.push([`${est}${u.input_tokens ?? 0} → ${est}${u.output_tokens ?? 0} tok`, "input → output tokens" + (u.reasoning_tokens ? `, ${u.reasoning_tokens} reasoning` : "")]);
  }
  if (u.ttft_ms != null) chips.push([`${(u.ttft_ms / 1000).toFixed(2)} s to first token`, "time to first token"]);
  if (u.tokens_per_s) chips.push([`${Number(u.tokens_per_s).toFixed(1)} tok/s`, "output speed"]);
  if (u.cost != null) chips.push([`$${Number(u.cost).toFixed(u.cost < 0.01 ? 4 : 3)}`, "cost from the model's catalog prices"]);
  return chips;
}

/** The chips of an answer's last step: the whole answer's tokens (and cost), said to be its total. */
function stepChips(step) {
  if (!step.usage) return [];
  return usageChips(step.usage).map(([text, title]) => [text, `${title} — this answer's ${step.steps} steps together`]);
}

// How long a reply thought (ms), by message id: measured in this page from the first
// reasoning delta to the first content delta (or the end). Kept here so reopening
// the chat in the same window still says it; saved history has no such timing.
const thoughtMs = new Map();
let seq = 0; // ids that name each message by its meta line ("You", "Model · writing…")

function thoughtLabel(ms) {
  if (ms == null) return "Reasoning";
  if (ms < 1000) return "Thought for less than a second";
  const s = Math.round(ms / 1000);
  return s < 60 ? `Thought for ${s} s` : `Thought for ${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * ‹ n/m ›: the versions of a message (CONTRACT §5 `versions`), a group named "Version n
 * of m" so a screen reader says where it is when focus enters it. The ends are
 * aria-disabled, not disabled: the focus stays on the button that was pressed.
 */
class VersionSwitch {
  constructor(go) {
    this.prev = h("button", { type: "button", class: "ghost icon-btn version-prev", "aria-label": "Previous version",
      onclick: () => go(-1) }, "‹");
    this.next = h("button", { type: "button", class: "ghost icon-btn version-next", "aria-label": "Next version",
      onclick: () => go(1) }, "›");
    this.count = h("span", { class: "version-count", "aria-hidden": "true" });
    this.el = h("div", { class: "versions", role: "group" }, this.prev, this.count, this.next);
  }

  update({ index, count }) {
    this.count.textContent = `${index}/${count}`;
    this.el.setAttribute("aria-label", `Version ${index} of ${count}`);
    this.prev.setAttribute("aria-disabled", String(index <= 1));
    this.next.setAttribute("aria-disabled", String(index >= count));
  }
}

/** The sibling `step` away from `msg` among its versions, or null at either end. */
function versionAt(msg, step) {
  const v = msg.versions;
  const id = v?.ids?.[v.index - 1 + step];
  return id === undefined ? null : id;
}

// What a message's plan card shows: its plan, and whether it is that plan's newest card.
const planKey = (msg, ctx) => (msg.plan ? `${JSON.stringify(msg.plan)}${ctx.plans?.get(msg.plan.plan_id) === msg.id}`
  + `${JSON.stringify(ctx.executions?.get(msg.plan.plan_id) ?? null)}${ctx.lastUser}` : "");

// Its place among the steps of one answer (web/js/answer-steps.js), and the answer's total.
const stepKey = (step) => (step ? `${step.position}/${step.steps}/${JSON.stringify(step.usage)}` : "");

const versionsKey = (v) => (v && v.count > 1 ? `${v.index}/${v.count}/${v.ids?.join()}` : "");

export class MessageView {
  /**
   * @param actions {{edit(id, text), regenerate(id, modelId?), continueReply(),
   *   switchVersion(fromId, toId, step), watchText(id, take) → unwatch}}
   */
  constructor(msg, actions) {
    this.actions = actions;
    this.id = msg.id;
    this.role = msg.role;
    this.msg = null;
    this.sig = "";
    this.editing = false;
    this.toolRows = new Map();
    this.el = h("article", { class: `msg ${msg.role}`, dataset: { id: String(msg.id) }, "aria-labelledby": `msg-meta-${++seq}` });
    if (msg.role === "assistant") {
      this._buildAssistant();
      // A streaming reply's deltas come here as they are applied, not through a frame.
      this.unwatch = actions.watchText?.(msg.id, (field, delta, now, was) => this._takeDelta(field, delta, now, was));
    } else {
      this._buildPlain();
    }
  }

  /** The bubble is gone from the thread: its message's deltas are no longer its own. */
  close() {
    this.unwatch?.();
    this.unwatch = null;
    this.unread?.();
  }

  _buildAssistant() {
    this.meta = h("div", { class: "msg-meta", id: `msg-meta-${seq}` });
    this.reasoningText = h("div", { class: "reasoning-body" });
    this.reasoningSummary = h("summary", {}, "Reasoning");
    this.reasoning = h("details", { class: "reasoning", hidden: true }, this.reasoningSummary, this.reasoningText);
    this.reasoningShown = "";
    // Announced once per message when it finishes: aria-busy holds it back while streaming.
    this.body = h("div", { class: "msg-body md", "aria-live": "polite" });
    // The reply's sources by n: its text's [n] markers link to them (views/sources.js).
    this.sourcesByN = new Map();
    this.renderer = new StreamRenderer(this.body, () => this._settled(),
      (nodes, raw) => linkCitations(nodes, this.sourcesByN, raw));
    this.tools = h("div", { class: "tool-calls" });
    this.images = new MessageImages(); // the images its step drew (CONTRACT §13)
    this.sourceList = new SourceList();
    this.error = h("div", { class: "msg-error", role: "note", hidden: true });
    this.usage = h("div", { class: "msg-usage" });
    this.bar = h("div", { class: "msg-actions" });
    // Read aloud (read-aloud.js): pressed while this reply is read; pressing it again stops.
    // Words, as the bar's other actions (and no SVG in the thread, where model output is checked for it).
    this.speakBtn = h("button", { type: "button", class: "ghost speak-btn", "aria-pressed": "false",
      title: "Read this reply aloud", onclick: () => this.actions.readAloud?.(this.id) }, "Read aloud");
    this.unread = reader.onChange(() => this._drawSpeaking());
    this._drawSpeaking(); // made after its reading began (auto-read starts at the reply's first words)
    this.foot = h("div", { class: "msg-foot" }, this.bar);
    this.el.append(this.meta, this.reasoning, this.body, this.tools, this.images.el, this.sourceList.el, this.error, this.usage,
      this.foot);
  }

  _buildPlain() {
    this.meta = h("div", { class: "msg-meta", id: `msg-meta-${seq}` });
    this.body = h("div", { class: "msg-body plain" });
    this.files = h("div", { class: "msg-files", role: "list", "aria-label": "Attached files", hidden: true });
    this.error = h("div", { class: "msg-error", role: "note", hidden: true });
    this.bar = h("div", { class: "msg-actions" });
    this.foot = h("div", { class: "msg-foot" }, this.bar);
    this.el.append(this.meta, this.files, this.body, this.error, this.foot);
  }

  /** The ‹ n/m › switcher, shown while the message has other versions. */
  _updateVersions(msg) {
    const key = versionsKey(msg.versions);
    if (key === this.versionsKey) return;
    this.versionsKey = key;
    if (!key) { this.switcher?.el.remove(); return; }
    this.switcher ??= new VersionSwitch((step) => {
      const to = versionAt(this.msg, step);
      if (to !== null) this.actions.switchVersion(this.msg.id, to, step);
    });
    this.switcher.update(msg.versions);
    if (!this.switcher.el.isConnected) this.foot.prepend(this.switcher.el);
  }

  /** Focus the switcher's button for `step` (-1 previous, 1 next): where the focus was on the version left. */
  focusVersion(step) {
    (step < 0 ? this.switcher?.prev : this.switcher?.next)?.focus();
  }

  /**
   * ctx: {busy, lastAssistant, toolResults: Map(callId → tool message), chatModel (the model
   * writing now), ownModel (the chat's own), waiting, steer, turnOver}
   */
  update(msg, ctx) {
    // Everything the bubble shows but its text (which its deltas draw: _takeDelta).
    const sig = [msg.status, !!msg.content, msg.role === "assistant" && modelLabel(msg.modelId || ctx.chatModel), !!msg.reasoning, msg.toolCalls?.length,
      (msg.toolCalls || []).map((c) => `${c.state}${c.ok}${c.output?.length}${ctx.waiting?.has(c.id)}${c.arguments?.length}${!!c.edited}`).join(","),
      !!msg.usage, !!msg.error, ctx.busy, ctx.lastAssistant, this.editing, !!ctx.steer?.has(msg.id), !!ctx.turnOver,
      versionsKey(msg.versions), ctx.ownModel, planKey(msg, ctx), stepKey(ctx.steps?.get(msg.id))].join("|");
    this.lastCtx = ctx;
    if (msg === this.msg && sig === this.sig) return;
    this.msg = msg;
    this.sig = sig;
    if (this.editing) return; // keep the editor as the person left it
    if (msg.role === "assistant") this._updateAssistant(msg, ctx);
    else this._updatePlain(msg, ctx);
  }

  /**
   * A delta the fold applied to this reply's `field` ("content" or "reasoning"): `was` the
   * message before it, `now` after. Drawn here at once, and true, when it continues the
   * text this bubble shows of the message it last drew: the fold then changed nothing but
   * that text (web/js/turn-events.js). Else false: the first text of a field (the body or
   * the reasoning shows), a message started over, anything the bubble has not drawn yet
   * goes through the next frame, which draws the whole message.
   */
  _takeDelta(field, delta, now, was) {
    if (!delta || !was || was !== this.msg || was.status !== "streaming" || !was[field]
        || now[field].length !== was[field].length + delta.length) return false;
    this.msg = now;
    if (field === "content") {
      this.renderer.append(delta, now.content);
    } else {
      this.reasoningText.append(delta);
      this.reasoningShown = now.reasoning;
    }
    return true;
  }

  _updateText(msg) {
    const streaming = msg.status === "streaming";
    this.renderer.update(msg.content || "", !streaming);
    this._timeReasoning(msg, streaming);
    this._updateReasoning(msg.reasoning || "", streaming && !msg.content);
  }

  _updateAssistant(msg, ctx) {
    const streaming = msg.status === "streaming";
    this._updateSources(msg.sources);
    this._updateText(msg);
    // Only what changed is written: a write, even of the same value, costs a style
    // and layout pass, and this runs on every frame of a streaming reply.
    this._markDrawn();
    setIf(this.meta, "textContent", [modelLabel(msg.modelId || ctx.chatModel), STATUS_TEXT[msg.status]].filter(Boolean).join(" · "));
    // One of several steps of one answer: one label (the first step's), one total and one
    // set of actions (the last step's); the label stays for assistive technology.
    const step = ctx.steps?.get(msg.id) || null;
    setIf(this.el.dataset, "step", step?.position || "");
    setIf(this.meta, "hidden", !!step && step.position !== "first");
    setIf(this.body, "hidden", !msg.content && !streaming);
    this._updateTools(msg.toolCalls || [], ctx.toolResults, ctx.waiting, ctx.turnOver);
    this._updatePlan(msg, ctx);
    this.images.update(msg);
    this._updateVersions(msg);
    const err = errorText(msg.error);
    setIf(this.error, "hidden", !err);
    setIf(this.error, "textContent", err);
    // A stop is the person's own doing: say so quietly, not as a failure.
    this.error.classList.toggle("quiet", msg.status === "cancelled");
    const chips = step ? stepChips(step) : usageChips(msg.usage);
    const chipsKey = chips.map(([text]) => text).join("|");
    if (chipsKey !== this.chipsKey) {
      this.chipsKey = chipsKey;
      this.usage.replaceChildren(...chips.map(([text, title]) => h("span", { class: "chip", title }, text)));
    }
    const can = !ctx.busy && !streaming;
    const cont = !(can && ctx.lastAssistant) ? "" : LIMITS.has(msg.error?.code) ? "continue"
      : CUT_OFF.has(msg.status) ? (msg.content ? "continue" : "retry") : "";
    // Regenerate answers with the chat's model (not necessarily the one that wrote this
    // reply, nor a fallback that answered for it), and says which; "with another model…"
    // picks any other.
    const chatModel = modelLabel(ctx.ownModel);
    const inner = !!step && step.position !== "last";
    const barKey = `${!!msg.content}|${can}|${cont}|${chatModel}|${inner}`;
    if (barKey === this.barKey) return;
    this.barKey = barKey;
    if (inner) { this.bar.replaceChildren(); return; }
    // A reply that failed before writing anything is asked again by Retry alone: Regenerate
    // and "with another model…" beside it would be the same action under three names.
    const again = can && cont !== "retry";
    replaceChildren(this.bar,
      msg.content ? h("button", { type: "button", class: "ghost", "aria-label": "Copy reply", onclick: () => this._copy() }, "Copy") : null,
      msg.content && this.actions.readAloud ? this.speakBtn : null,
      again ? h("button", { type: "button", class: "ghost regen-btn", "aria-label": `Regenerate this reply with ${chatModel}`,
        title: `A new version of this reply by ${chatModel}; this one is kept`, onclick: () => this.actions.regenerate(msg.id) },
      "Regenerate") : null,
      again ? this._regenerateWith().el : null,
      // A cut-off reply with text can be continued; one that failed before writing anything is asked again.
      cont === "continue"
        ? h("button", { type: "button", class: "ghost accent", "aria-label": "Continue this reply", onclick: () => this.actions.continueReply() }, "Continue")
        : cont === "retry"
          ? h("button", { type: "button", class: "ghost accent", "aria-label": "Retry this reply", onclick: () => this.actions.regenerate(msg.id) }, "Retry")
          : null,
    );
  }

  /** The speaker button says whether this reply is being read now. */
  _drawSpeaking() {
    const on = reader.isReading(this.id);
    this.speakBtn.setAttribute("aria-pressed", String(on));
    setIf(this.speakBtn, "title", on ? "Stop reading (Esc)" : "Read this reply aloud");
  }

  /** The reply's sources (CONTRACT §8): the list under it, and its drawn text's markers linked again. */
  _updateSources(sources) {
    if (sources === this.sources) return;
    this.sources = sources;
    const shown = shownSources(sources);
    this.sourcesByN = new Map(shown.map((s) => [s.n, s]));
    this.sourceList.update(shown);
    this.renderer.reannotate();
  }

  /**
   * The bubble says it is finished (its status, aria-busy off) once its text is all
   * drawn: a reply's last render may still be away (StreamRenderer.settling).
   */
  _markDrawn() {
    const status = this.renderer.settling ? "streaming" : this.msg.status || "";
    setIf(this.el.dataset, "status", status);
    setIf(this.body, "ariaBusy", status === "streaming" ? "true" : "false");
  }

  _settled() {
    if (this.msg && !this.editing) this._markDrawn();
  }

  /** Live replies only: the clock starts when reasoning first shows while it streams. */
  _timeReasoning(msg, streaming) {
    if (thoughtMs.has(msg.id)) return;
    // Events re-sent after a reload (the turn's replay) arrive in one burst: not a timing.
    if (msg.replayed) { this.thinkStart = false; return; }
    if (this.thinkStart == null) {
      // Text already there when first seen (history, or a reload mid-reply): not timed.
      if (streaming && msg.reasoning && !msg.content) this.thinkStart = performance.now();
      else if (!streaming || msg.content) this.thinkStart = false;
      return;
    }
    if (this.thinkStart !== false && (msg.content || !streaming)) {
      thoughtMs.set(msg.id, performance.now() - this.thinkStart);
      this.thinkStart = false;
    }
  }

  _updateReasoning(text, thinking) {
    setIf(this.reasoning, "hidden", !text);
    const label = thinking ? "Thinking…" : thoughtLabel(thoughtMs.get(this.id));
    if (text === this.reasoningShown && label === this.reasoningLabel) return;
    this.reasoningLabel = label;
    if (!text) return;
    setIf(this.reasoningSummary, "textContent", label);
    // Append only the new part.
    if (text.startsWith(this.reasoningShown) && this.reasoningShown) {
      const delta = text.slice(this.reasoningShown.length);
      if (delta) this.reasoningText.append(delta);
    } else {
      this.reasoningText.textContent = text;
    }
    this.reasoningShown = text;
  }

  _updateTools(calls, results, waiting, turnOver) {
    const seen = new Set();
    for (const call of calls) {
      let row = this.toolRows.get(call.id);
      if (!row) {
        row = new ToolCallRow();
        this.toolRows.set(call.id, row);
        this.tools.append(row.el, row.trace);
      }
      // A call still "running" when nothing runs any more (the server restarted, or the
      // turn died) ended without a result: no spinner, no clock.
      const stale = turnOver && (call.state === "running" || call.state === "preparing") && call.output == null
        && !results?.has(call.id);
      row.update(waiting?.has(call.id) ? { ...call, state: "approval" } : stale ? { ...call, state: "unfinished" } : call,
        results?.get(call.id));
      seen.add(call.id);
    }
    for (const [id, row] of this.toolRows) {
      if (!seen.has(id)) { row.el.remove(); row.trace.remove(); this.toolRows.delete(id); }
    }
  }

  /** The plan its step's update_plan call left, as a card after its tool rows (views/plan-card.js). */
  _updatePlan(msg, ctx) {
    if (!msg.plan) { this.planCard?.el.remove(); this.planCard = null; return; }
    this.planCard ??= new PlanCard((planId) => this.actions.executePlan?.(planId));
    this.planCard.update(msg.plan, planState(msg.plan, { newest: ctx.plans?.get(msg.plan.plan_id) === msg.id, running: ctx.busy,
                                                         execution: ctx.executions?.get(msg.plan.plan_id), lastUserId: ctx.lastUser }));
    if (!this.planCard.el.isConnected) this.tools.after(this.planCard.el);
  }

  _updatePlain(msg, ctx) {
    this.el.dataset.status = msg.status || "";
    const label = msg.role === "user" ? (msg.research ? "You · Research" : "You") : msg.role === "tool" ? "Tool result" : "System";
    // A steering message waits for the running reply's next step, not for its end.
    const status = msg.status === "queued" && ctx.steer?.has(msg.id) ? "queued to steer the reply" : STATUS_TEXT[msg.status];
    this.meta.textContent = [label, status].filter(Boolean).join(" · ");
    this.body.textContent = msg.content || "";
    this._updateFiles(msg.attachments || []);
    this.body.hidden = !msg.content && !!msg.attachments?.length; // files alone: no empty bubble
    const err = errorText(msg.error);
    this.error.hidden = !err;
    this.error.textContent = err;
    if (msg.role !== "user") { this.bar.replaceChildren(); return; }
    this._updateVersions(msg);
    const saved = !msg.pending && msg.status !== "queued";
    replaceChildren(this.bar,
      h("button", { type: "button", class: "ghost", "aria-label": "Copy message", onclick: () => this._copy() }, "Copy"),
      saved && !ctx.busy ? h("button", { type: "button", class: "ghost edit-btn", "aria-label": "Edit this message", onclick: () => this._startEdit() }, "Edit") : null,
    );
  }

  /** A user message's files: images as thumbnails (served inline), the rest as name and size. */
  _updateFiles(files) {
    const key = files.map((f) => f.id).join();
    if (key === this.filesKey) return;
    this.filesKey = key;
    this.files.hidden = !files.length;
    this.files.replaceChildren(...files.map((f) => h("div", { class: `msg-file${isImage(f.mime) ? " image" : ""}`, role: "listitem" },
      h("a", { href: fileUrl(f.id), target: "_blank", rel: "noopener", title: `${f.name} (${formatSize(f.size)})` },
        isImage(f.mime)
          ? h("img", { class: "msg-thumb", src: fileUrl(f.id), alt: f.name, loading: "lazy" })
          : [icon("file"), h("span", { class: "attach-name" }, f.name),
            h("span", { class: "attach-size" }, formatSize(f.size))]))));
  }

  /** "with another model…": the model picker, whose pick answers again with that model (made once per reply). */
  _regenerateWith() {
    this.regenPicker ??= new ModelPicker({ label: "Regenerate with another model", text: "with another model…",
      onPick: (modelId) => this.actions.regenerate(this.id, modelId) });
    return this.regenPicker;
  }

  /** Open the editor, as the Edit button does; false when the message cannot be edited now. */
  edit() {
    if (this.editing || !this.bar.querySelector(".edit-btn")) return false;
    this._startEdit();
    return true;
  }

  async _copy() {
    // A reply's cited sources go with it, so its [n] still lead somewhere once pasted.
    if (await copyText(withCitedSources(this.msg?.content || "", this.msg?.sources))) toast("Copied.");
  }

  _startEdit() {
    this.editing = true;
    const area = h("textarea", { class: "edit-area", value: this.msg.content || "", "aria-label": "Edit message", rows: 3 });
    const done = (save) => {
      this.editing = false;
      const text = area.value;
      editor.remove();
      this.body.hidden = false;
      this.bar.hidden = false;
      this.sig = "";
      if (save && text.trim() && text !== this.msg.content) this.actions.edit(this.msg.id, text);
      this.update(this.msg, this.lastCtx || { busy: false });
    };
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); done(true); }
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); done(false); }
    });
    const editor = h("div", { class: "editor" }, area,
      h("div", { class: "editor-bar" },
        h("span", { class: "hint" }, "Saving makes a new version of this message and answers it again; this version and its replies are kept (‹ › switches)."),
        h("button", { type: "button", class: "ghost", onclick: () => done(false) }, "Cancel"),
        h("button", { type: "button", class: "primary", onclick: () => done(true) }, "Save & send")));
    this.body.hidden = true;
    this.bar.hidden = true;
    this.body.after(editor);
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }
}
