// A tool call as one row: name, state, duration; arguments and output fold open.
// Tool text is shown with textContent only: it comes from models and tools.
import { h } from "../dom.js";

export function prettyJson(value) {
  if (value === undefined || value === null || value === "") return "";
  if (typeof value !== "string") return JSON.stringify(value, null, 2);
  try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
}

function stateOf(call) {
  if (call.ok === true) return ["ok", "ok"];
  if (call.ok === false) return ["err", "error"];
  if (call.state === "approval") return ["wait", "waiting for you"];
  if (call.state === "preparing") return ["run", "preparing…"];
  if (call.state === "running" || call.state === "started") return ["run", "running…"];
  if (call.output !== undefined && call.output !== null && call.output !== "") return ["ok", "done"];
  return ["run", call.state || "pending"];
}

export class ToolCallRow {
  constructor() {
    this.name = h("span", { class: "tool-name" });
    this.badge = h("span", { class: "tool-state" });
    this.time = h("span", { class: "tool-time" });
    this.args = h("pre", { class: "tool-pre" });
    this.out = h("pre", { class: "tool-pre" });
    this.outWrap = h("div", { class: "tool-section" }, h("div", { class: "tool-label" }, "Output"), this.out);
    this.el = h("details", { class: "tool-call" },
      h("summary", {}, h("span", { class: "tool-icon", "aria-hidden": "true" }, "⚙"), this.name, this.badge, this.time),
      h("div", { class: "tool-section" }, h("div", { class: "tool-label" }, "Arguments"), this.args),
      this.outWrap);
    this.key = "";
  }

  update(call, result) {
    const output = call.output ?? result?.content ?? null;
    const ok = call.ok ?? (result ? !(result.status === "error") : undefined);
    const merged = { ...call, output, ok: call.ok ?? (result ? ok : undefined) };
    const key = [call.name, (call.arguments || "").length, merged.ok, call.state, output?.length, call.durationMs].join("|");
    if (key === this.key) return;
    this.key = key;
    const [cls, label] = stateOf(merged);
    this.el.dataset.state = cls;
    this.name.textContent = call.name || "tool";
    this.badge.textContent = label;
    this.time.textContent = call.durationMs != null ? `${(call.durationMs / 1000).toFixed(call.durationMs < 10000 ? 2 : 1)} s` : "";
    this.args.textContent = prettyJson(call.arguments) || "(no arguments)";
    this.outWrap.hidden = output === null || output === undefined;
    this.out.textContent = typeof output === "string" ? output : prettyJson(output);
  }
}
