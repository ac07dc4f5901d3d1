// A tool waits for the person: show what it wants to run, exactly, and answer allow once,
// allow always (remembered per chat: the tool, or for the shell one exact command) or deny
// with an optional reason. Edit turns the arguments into JSON to change before allowing:
// what runs is what was allowed (`approve` with `arguments`). A file write shows what it
// will change first (`diff`: a unified diff, or why there is none), above its arguments.
// A call that would send text off the machine after the conversation read private content
// (`outbound`) says so and shows exactly what it would send; it can only be allowed once.
import { h } from "../dom.js";
import { diffView } from "./diff.js";
import { prettyJson } from "./tool-call.js";

let cards = 0;

/** The edited text as a JSON object, or the sentence saying why it is not one. */
export function parseArguments(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `This is not valid JSON (${String(err.message).replace(/^JSON\.parse: /, "")}). Nothing was sent.` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { error: "The arguments must be one JSON object, { … }. Nothing was sent." };
  }
  return { value };
}

function parsed(args) {
  if (args && typeof args === "object") return args;
  try { return JSON.parse(args); } catch { return undefined; }
}

/**
 * @param a {{approval_id, call_id, name, arguments, can_always, changed?, description?, diff?,
 *             outbound?: {sends, reason}, local?: {url, reason}, untrusted?: {read, reason},
 *             updates?: {memory_id, text}}}
 * @param answer (approvalId, decision, reason?, args?) → void; args is an object, only when edited
 * @returns the card element; `el.unlock()` makes it answerable again (the server refused an answer)
 */
export function approvalCard(a, answer) {
  const n = ++cards;
  const name = a.name || "a tool";
  const canAlways = a.can_always !== false;
  const original = prettyJson(a.arguments) || "{}";
  const view = h("pre", { class: "tool-pre approval-args", id: `approval-args-${n}` }, prettyJson(a.arguments) || "(no arguments)");
  const area = h("textarea", { class: "approval-json mono", id: `approval-json-${n}`, rows: Math.min(14, original.split("\n").length + 1),
                               spellcheck: false, "aria-describedby": `approval-err-${n} approval-note-${n}` });
  const error = h("div", { class: "field-error", id: `approval-err-${n}`, role: "alert" });
  const editBox = h("div", { class: "approval-edit", id: `approval-edit-${n}`, hidden: true },
    area, error,
    h("div", { class: "hint", id: `approval-note-${n}` }, "Allowing runs the call with these arguments; the model is told you changed them."));
  const editBtn = h("button", { type: "button", class: "ghost", "aria-controls": editBox.id, "aria-pressed": "false",
                                "aria-label": `Edit the arguments before allowing`, onclick: () => setEditing(!editing) }, "Edit");
  let editing = false;
  // The textarea's label too (in edit mode it reads "Arguments (JSON)").
  const headLabel = h("label", { class: "tool-label", for: area.id }, "Arguments");

  const setEditing = (on) => {
    editing = on;
    editBtn.setAttribute("aria-pressed", String(on));
    editBtn.textContent = on ? "Cancel edit" : "Edit";
    headLabel.textContent = on ? "Arguments (JSON)" : "Arguments";
    editBtn.setAttribute("aria-label", on ? "Cancel edit: keep the model's arguments" : "Edit the arguments before allowing");
    view.hidden = on;
    editBox.hidden = !on;
    error.textContent = "";
    area.removeAttribute("aria-invalid");
    if (on) {
      area.value = original;
      area.focus();
    } else {
      editBtn.focus();
    }
  };

  const buttons = [];
  const lock = (on) => {
    for (const b of buttons) b.disabled = on || (b === always && !canAlways);
    area.readOnly = on;
    reason.readOnly = on;
    card.toggleAttribute("aria-busy", on);
  };
  /** Allow (once or always): with the edited arguments, if they were changed and are valid. */
  const allow = (decision) => {
    if (!editing) { lock(true); answer(a.approval_id, decision); return; }
    const result = parseArguments(area.value);
    if (result.error) {
      error.textContent = result.error;
      area.setAttribute("aria-invalid", "true");
      area.focus();
      return;
    }
    error.textContent = "";
    area.removeAttribute("aria-invalid");
    const unchanged = JSON.stringify(result.value) === JSON.stringify(parsed(a.arguments));
    lock(true);
    answer(a.approval_id, decision, undefined, unchanged ? undefined : result.value);
  };
  const deny = () => { lock(true); answer(a.approval_id, "deny", reason.value.trim()); };

  const reason = h("input", { type: "text", class: "deny-reason", placeholder: "Reason (optional, the model sees it)", "aria-label": "Reason for denying" });
  const denyBtn = h("button", { type: "button", class: "danger", onclick: deny }, "Deny");
  const denyRow = h("div", { class: "deny-row", hidden: true }, reason, denyBtn);
  reason.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); deny(); }
    // Esc here closes the reason, it does not stop the reply (shortcuts.js).
    if (e.key === "Escape") { e.preventDefault(); denyRow.hidden = true; denyOpen.focus(); }
  });
  area.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); allow("allow"); }
    if (e.key === "Escape") { e.preventDefault(); setEditing(false); }
  });

  const once = h("button", { type: "button", class: "primary", onclick: () => allow("allow") }, "Allow once");
  const noAlways = a.local
    ? "Always allow is not offered for this call: an address on your own computer or network is allowed "
      + "one call at a time, or for good in Settings → Web fetch."
    : a.outbound
    ? "Always allow is not offered for this call: after this conversation read private content, "
      + "anything sent out asks each time."
    : a.untrusted
    ? "Always allow is not offered for this call: after this conversation read text from outside, "
      + "saving a memory asks each time."
    : "Always allow is not offered for this call: only a single plain command can be allowed for good, "
      + "and this one chains commands, pipes, redirects or substitutes. It asks each time.";
  const always = h("button", { type: "button", class: "ghost", onclick: () => allow("allow_always"),
    disabled: !canAlways, title: canAlways ? "Allow this tool (for the shell: this exact command) in this chat from now on" : noAlways,
    "aria-describedby": canAlways ? null : `approval-always-${n}` }, "Always allow");
  const denyOpen = h("button", { type: "button", class: "ghost", "aria-expanded": "false",
    onclick: () => { denyRow.hidden = false; denyOpen.setAttribute("aria-expanded", "true"); reason.focus(); } }, "Deny…");
  buttons.push(once, always, denyOpen, denyBtn, editBtn);

  // The turn stops until the person answers, so the request is announced when the card
  // appears (an alert is read on insertion; a status region would have to exist first).
  // Only the title line: the arguments are there to read, not to be read out.
  const card = h("section", { class: "approval", role: "group", "aria-label": `Approval needed for ${name}`, dataset: { approvalId: a.approval_id } },
    h("div", { class: "approval-title", role: "alert" }, "The model wants to run ", h("code", {}, name)),
    // An MCP tool new to this chat, or changed since it was allowed: what it says it does now.
    a.changed ? h("div", { class: "notice warn approval-changed", role: "note" },
      h("strong", {}, "New or changed tool. "), "Its server describes it as: ",
      h("span", { class: "approval-description" }, a.description || "(no description)")) : null,
    // Text nodes only: what would be sent is the model's, and may be anything.
    a.outbound ? h("div", { class: "notice warn approval-outbound", role: "note" },
      h("strong", {}, "This would send text out. "), a.outbound.reason,
      h("div", { class: "tool-label" }, "What it would send"),
      h("pre", { class: "tool-pre approval-sends" }, a.outbound.sends || "(nothing)")) : null,
    // A memory after outside text was read: where that text came from, which may have asked for it.
    a.untrusted ? h("div", { class: "notice warn approval-untrusted", role: "note" },
      h("strong", {}, "Read from outside. "), a.untrusted.reason) : null,
    a.updates ? h("div", { class: "notice approval-updates", role: "note" },
      h("strong", {}, "This updates a memory. "), "It now reads:",
      h("pre", { class: "tool-pre approval-old-memory" }, a.updates.text)) : null,
    a.local ? h("div", { class: "notice warn approval-local", role: "note" },
      h("strong", {}, "On your own network. "), a.local.reason,
      h("pre", { class: "tool-pre approval-local-url" }, a.local.url)) : null,
    a.diff ? h("div", { class: "approval-diff" }, h("div", { class: "tool-label" }, "What will change"), diffView(a.diff)) : null,
    h("div", { class: "approval-args-head" }, headLabel, editBtn),
    view, editBox,
    h("div", { class: "approval-buttons" }, once, always, denyOpen),
    canAlways ? null : h("p", { class: "hint approval-note", id: `approval-always-${n}` }, noAlways),
    denyRow);
  card.unlock = () => lock(false);
  return card;
}
