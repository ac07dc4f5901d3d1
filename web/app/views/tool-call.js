// A tool call as one row: name, live state (preparing → running, with a spinner and the
// time so far → ok / failed), the shell's exit code, duration; the row folds open to
// the arguments and the output, each of which folds away on its own. Long output shows
// its first 40 lines / 4 000 characters until "Show all". While it runs, the server's
// `tool_progress` adds its progress (an MCP tool's figures and message) and its last
// lines of output; a file write, once done, shows the change it made (a diff).
// Tool text is shown with textContent only: it comes from models and tools.
import { h } from "../dom.js";
import { diffStat, parseDiff } from "../../js/diff-view.js";
import { exitChip, formatDuration, notOfferedLabel, shellCommand, shellFooter, truncateOutput } from "../../js/tool-output.js";
import { diffView } from "./diff.js";
import { answerText, questionTrace } from "../../js/question-trace.js";

export function prettyJson(value) {
  if (value === undefined || value === null || value === "") return "";
  if (typeof value !== "string") return JSON.stringify(value, null, 2);
  try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
}

// How the server words the result of a call the person (or a "deny" rule) did not allow
// (backend/core/agent.py): the call did not fail, it was refused.
export const DENIED_PREFIX = "The person did not allow this call.";

function stateOf(call) {
  if (call.ok === true) return ["ok", "ok"];
  if (call.ok === false && typeof call.output === "string" && call.output.startsWith(DENIED_PREFIX)) return ["denied", "denied"];
  // A tool the chat's mode does not offer: neutral, it did not fail.
  const held = call.ok === false ? notOfferedLabel(call.output) : null;
  if (held) return ["off", held];
  if (call.ok === false) return ["err", "failed"];
  if (call.state === "approval") return ["wait", "waiting for you"];
  if (call.state === "preparing") return ["run", "preparing…"];
  if (call.state === "running" || call.state === "started") return ["run", "running…"];
  if (call.state === "unfinished") return ["err", "did not finish"];
  if (call.output !== undefined && call.output !== null && call.output !== "") return ["ok", "done"];
  return ["run", call.state || "pending"];
}

let rows = 0;

/** A progress figure as people write it: 3, 2.5 (never 2.5000000001). */
const fmt = (n) => (Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100));

/** A label that folds its section: a button with aria-expanded (not a nested <summary>). */
function foldButton(label, target) {
  const b = h("button", { type: "button", class: "tool-label tool-fold", "aria-expanded": "true", "aria-controls": target.id },
    h("span", { class: "i i-caret fold-caret", "aria-hidden": "true" }), label);
  b.addEventListener("click", () => {
    const open = b.getAttribute("aria-expanded") !== "true";
    b.setAttribute("aria-expanded", String(open));
    target.hidden = !open;
  });
  return b;
}

export class ToolCallRow {
  constructor() {
    const id = ++rows;
    this.name = h("span", { class: "tool-name" });
    this.preview = h("code", { class: "tool-preview", hidden: true });
    this.spinner = h("span", { class: "tool-spinner", "aria-hidden": "true", hidden: true });
    this.badge = h("span", { class: "tool-state" });
    // The clock while it runs is for the eye only: a summary's name changing every
    // second would be read out again and again.
    this.elapsed = h("span", { class: "tool-elapsed", "aria-hidden": "true", hidden: true });
    this.exit = h("span", { class: "chip exit-chip", hidden: true });
    this.time = h("span", { class: "tool-time" });
    this.stat = h("span", { class: "tool-diffstat", hidden: true });
    // What a running call reported last: one line of it in the summary (for the eye only, as
    // the clock), and inside MCP's figures as a bar with its message, and the last output lines.
    this.liveLine = h("span", { class: "tool-live-line", "aria-hidden": "true", hidden: true });
    this.liveBar = h("progress", { class: "tool-progress-bar", max: 1, hidden: true, "aria-label": "Progress" });
    this.liveNote = h("span", { class: "tool-progress-note" });
    this.liveOut = h("pre", { class: "tool-pre tool-live-out", hidden: true });
    this.live = h("div", { class: "tool-live", hidden: true }, h("div", { class: "tool-progress" }, this.liveBar, this.liveNote),
      this.liveOut);
    this.diffBody = h("div", { class: "tool-diff-body", id: `tool-diff-${id}` });
    this.diffWrap = h("div", { class: "tool-section", hidden: true }, foldButton("Changes", this.diffBody), this.diffBody);
    this.diffShown = null;
    this.args = h("pre", { class: "tool-pre", id: `tool-args-${id}` });
    this.out = h("pre", { class: "tool-pre tool-out", id: `tool-out-${id}` });
    this.more = h("button", { type: "button", class: "ghost tool-more", hidden: true, "aria-controls": this.out.id,
                              "aria-expanded": "false", onclick: () => this._toggleAll() });
    this.footer = h("div", { class: "tool-footer hint", hidden: true });
    // An MCP call refused for want of a sign-in: the place to sign in, one click away. The link is
    // the app's own (a fixed route), whatever the output says around it.
    this.signIn = h("p", { class: "tool-footer hint", hidden: true },
      h("a", { href: "#/settings/mcp" }, "Open Settings → MCP servers"), " to sign in.");
    const outBody = h("div", { class: "tool-out-body", id: `tool-outbody-${id}` }, this.out, this.more, this.footer,
      this.signIn);
    this.outWrap = h("div", { class: "tool-section" }, foldButton("Output", outBody), outBody);
    const argsBody = h("div", { id: `tool-argsbody-${id}` }, this.args);
    this.edited = h("span", { class: "chip edited-chip", hidden: true, title: "You changed the arguments before allowing the call: these are what ran" }, "edited by you");
    this.el = h("details", { class: "tool-call" },
      h("summary", {}, h("span", { class: "i i-gear tool-icon", "aria-hidden": "true" }), this.name, this.preview,
        this.liveLine, this.spinner, this.badge, this.exit, this.stat, this.elapsed, this.time),
      this.live,
      h("div", { class: "tool-section" }, foldButton("Arguments", argsBody), this.edited, argsBody),
      this.diffWrap,
      this.outWrap);
    // An ask_user call's questions and the answers chosen, beside the row (not folded away).
    this.trace = h("div", { class: "question-trace", hidden: true });
    this.traceKey = "";
    this.key = "";
    this.showAll = false;
    this.output = "";
    this.startedAt = null;
    this.timer = 0;
  }

  update(call, result) {
    const output = call.output ?? result?.content ?? null;
    const ok = call.ok ?? (result ? !(result.status === "error") : undefined);
    const merged = { ...call, output, ok: call.ok ?? (result ? ok : undefined) };
    const diff = merged.ok === false ? null : call.diff ?? result?.diff ?? null;
    const key = [call.name, call.arguments?.length ?? 0, call.arguments === this.argsShown, merged.ok, call.state,
      output?.length, call.durationMs, !!call.edited, diff?.length, call.progress?.elapsedMs].join("|");
    if (key === this.key) return;
    this.key = key;
    const trace = call.name === "ask_user" ? questionTrace(call.arguments, output) : null;
    let [cls, label] = stateOf(merged);
    if (trace) [cls, label] = [trace.status === "answered" ? "ok" : "off", trace.label];
    this._drawTrace(trace);
    this.el.dataset.state = cls;
    const live = cls === "run";
    this.el.toggleAttribute("data-live", live);
    this.name.textContent = call.name || "tool";
    this.badge.textContent = label;
    this.spinner.hidden = !live;
    const command = call.name === "shell" ? shellCommand(call.arguments) : "";
    this.preview.hidden = !command;
    this.preview.textContent = command.split("\n")[0];
    if (command) this.preview.title = command;
    this.argsShown = call.arguments;
    this.args.textContent = prettyJson(call.arguments) || "(no arguments)";
    this.edited.hidden = !call.edited;
    this._clock(live ? call.state : null);
    this._drawLive(live ? call.progress : null);
    this._drawDiff(diff);

    const text = output === null || output === undefined ? null : typeof output === "string" ? output : prettyJson(output);
    const footer = call.name === "shell" ? shellFooter(text) : null;
    const chip = exitChip(footer);
    this.exit.hidden = !chip;
    // A command that ran says how it ended with its exit code: "ok" beside "exit 2" would only confuse.
    this.badge.hidden = !!chip && cls === "ok";
    if (chip) {
      this.exit.textContent = chip.text;
      this.exit.className = `chip exit-chip ${chip.ok ? "ok" : "bad"}`;
      this.exit.title = footer.line;
    }
    const ms = call.durationMs ?? footer?.ms ?? null;
    this.time.textContent = ms != null && !live ? formatDuration(ms) : "";
    this.outWrap.hidden = text === null;
    this.footer.hidden = !footer || footer.how === "exit";
    this.footer.textContent = footer && footer.how !== "exit" ? footer.note.replace(/^./, (c) => c.toUpperCase()) + "." : "";
    this.output = footer ? footer.body : text ?? "";
    this.signIn.hidden = !(call.ok === false && (call.name || "").startsWith("mcp__") && /sign in/i.test(text || "")
      && (text || "").includes("Settings → MCP servers"));
    this._drawOutput();
  }

  /** An answered (or unanswered) question in words: each prompt, the labels chosen. */
  _drawTrace(trace) {
    const key = trace ? JSON.stringify(trace) : "";
    if (key === this.traceKey) return;
    this.traceKey = key;
    this.trace.hidden = !trace;
    if (!trace) { this.trace.replaceChildren(); return; }
    this.trace.dataset.status = trace.status;
    const answered = trace.status === "answered";
    const list = !trace.items.length ? null : answered
      ? h("dl", {}, ...trace.items.map((entry) => h("div", { class: "question-trace-item" },
        h("dt", {}, entry.prompt),
        h("dd", {}, answerText(entry),
          entry.answers.some((a) => a.own) ? h("span", { class: "hint" }, " (in your own words)") : null))))
      : h("ul", {}, ...trace.items.map((entry) => h("li", { class: "question-trace-item" }, entry.prompt)));
    this.trace.replaceChildren(
      h("div", { class: "question-trace-title" }, answered ? "You answered" : "The model asked"),
      list,
      trace.note ? h("p", { class: "question-trace-note" }, trace.note) : null);
  }

  _drawOutput() {
    const cut = truncateOutput(this.output);
    this.more.hidden = !cut;
    if (cut) {
      this.more.textContent = this.showAll ? "Show less" : `Show all ${cut.totalLines} lines`;
      this.more.setAttribute("aria-expanded", String(this.showAll));
      if (!this.showAll) {
        this.more.setAttribute("aria-label", `Show all ${cut.totalLines} lines (${cut.totalChars.toLocaleString()} characters) of the output`);
      } else {
        this.more.removeAttribute("aria-label");
      }
    }
    const shown = (cut && !this.showAll ? `${cut.shown}\n…` : this.output) || "(no output)";
    this.out.classList.toggle("cut", !!cut && !this.showAll);
    this.out.classList.toggle("all", !!cut && this.showAll);
    if (this.out.textContent !== shown) this.out.textContent = shown;
  }

  /** A running call's last report: the time the server counted, figures, last lines. */
  _drawLive(p) {
    this.live.hidden = !p;
    this.liveLine.hidden = !p;
    if (!p) return;
    // The server's clock: right after a reload too, when this row was not there at the start.
    const since = performance.now() - (p.elapsedMs || 0);
    if (this.startedAt == null || since < this.startedAt) {
      this.startedAt = since;
      if (this.timer) { clearTimeout(this.timer); this.timer = 0; }
      this._tick();
    }
    const figures = p.progress != null;
    this.liveBar.hidden = !(figures && p.total);
    if (figures && p.total) {
      this.liveBar.max = p.total;
      this.liveBar.value = Math.min(p.progress, p.total);
    }
    const count = figures ? (p.total ? `${fmt(p.progress)} of ${fmt(p.total)}` : fmt(p.progress)) : "";
    const note = [p.message, count && (p.message ? `(${count})` : count)].filter(Boolean).join(" ");
    this.liveNote.textContent = note;
    const lastLine = (p.output || "").trimEnd().split("\n").pop();
    this.liveLine.textContent = note || lastLine;
    this.liveLine.hidden = !this.liveLine.textContent;
    this.liveOut.hidden = !p.output;
    if (this.liveOut.textContent !== (p.output || "")) {
      this.liveOut.textContent = p.output || "";
      this.liveOut.scrollTop = this.liveOut.scrollHeight;
    }
  }

  /** The change a file write made (a diff, or why there is none): its own section, a +/− chip. */
  _drawDiff(diff) {
    this.diffWrap.hidden = !diff;
    if (diff === this.diffShown) return;
    this.diffShown = diff;
    const parsed = diff ? parseDiff(diff) : null;
    const stat = parsed && parsed.lines.length ? diffStat(parsed) : "";
    this.stat.hidden = !stat;
    this.stat.textContent = stat;
    this.diffBody.replaceChildren(...(diff ? [diffView(diff)] : []));
  }

  _toggleAll() {
    this.showAll = !this.showAll;
    this._drawOutput();
  }

  /** While the call is live, the seconds so far (one timer, only then). */
  _clock(state) {
    if (!state) {
      this.startedAt = null;
      this.phase = null;
      this.elapsed.hidden = true;
      clearTimeout(this.timer);
      this.timer = 0;
      return;
    }
    // The run is timed from when it started running (preparing is the model writing).
    if (state !== this.phase) { this.phase = state; this.startedAt = performance.now(); }
    if (!this.timer) this._tick();
  }

  _tick() {
    this.timer = 0;
    if (this.startedAt == null) return;
    // A row dropped from the page stops its clock (it was connected once, or never will be).
    if (!this.el.isConnected) {
      this.away = (this.away || 0) + 1;
      if (this.away > 5) return;
    } else {
      this.away = 0;
      const s = Math.floor((performance.now() - this.startedAt) / 1000);
      this.elapsed.hidden = s < 1;
      const text = `${s} s`;
      if (this.elapsed.textContent !== text) this.elapsed.textContent = text;
    }
    this.timer = setTimeout(() => this._tick(), 1000);
  }
}
