// A tool waits for the person: show what it wants to run, and answer allow once,
// allow always (remembered per chat and tool) or deny with an optional reason.
import { h } from "../dom.js";
import { prettyJson } from "./tool-call.js";

export function approvalCard(a, answer) {
  const reason = h("input", { type: "text", class: "deny-reason", placeholder: "Reason (optional, the model sees it)", "aria-label": "Reason for denying" });
  const denyRow = h("div", { class: "deny-row", hidden: true }, reason,
    h("button", { type: "button", class: "danger", onclick: () => answer(a.approval_id, "deny", reason.value.trim()) }, "Deny"));
  reason.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); answer(a.approval_id, "deny", reason.value.trim()); }
  });
  // The turn stops until the person answers, so the request is announced when the card
  // appears (an alert is read on insertion; a status region would have to exist first).
  // Only the title line: the arguments are there to read, not to be read out.
  return h("section", { class: "approval", role: "group", "aria-label": `Approval needed for ${a.name || "a tool"}` },
    h("div", { class: "approval-title", role: "alert" }, "The model wants to run ", h("code", {}, a.name || "a tool")),
    h("pre", { class: "tool-pre" }, prettyJson(a.arguments) || "(no arguments)"),
    h("div", { class: "approval-buttons" },
      h("button", { type: "button", class: "primary", onclick: () => answer(a.approval_id, "allow") }, "Allow once"),
      h("button", { type: "button", class: "ghost", onclick: () => answer(a.approval_id, "allow_always") }, "Always allow"),
      h("button", { type: "button", class: "ghost", onclick: () => { denyRow.hidden = false; reason.focus(); } }, "Deny…")),
    denyRow);
}
