// Modal sheets built on <dialog>: it traps focus, closes on Esc and gives focus back.
import { h } from "../dom.js";
import { patch } from "../api.js";
import { toast } from "./toast.js";
import { workspacePicker } from "./workspace.js";
import { chatApprovals } from "./approvals.js";
import { app } from "../store.js";
import { followsSentence, memoryChoice, memoryValue } from "../../js/memory.js";

let sheets = 0;

export function sheet(title, ...body) {
  // Named by its visible heading, so the two cannot drift apart. showModal() already makes
  // it modal for assistive technology; aria-modal says so for any that read only attributes.
  const titleId = `sheet-title-${++sheets}`;
  const d = h("dialog", { class: "sheet", "aria-labelledby": titleId, "aria-modal": "true" },
    h("div", { class: "sheet-head" }, h("h2", { id: titleId }, title),
      h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Close", onclick: () => d.close() }, h("span", { class: "i i-close", "aria-hidden": "true" }))),
    ...body);
  // Focus goes back to what opened the sheet (or the message box if that is gone).
  const opener = document.activeElement;
  d.addEventListener("close", () => {
    d.remove();
    const back = opener?.isConnected && opener !== document.body ? opener : document.querySelector(".composer-input:not([disabled])");
    back?.focus();
  });
  // A modal <dialog> keeps the page behind it inert, but Tab past its last control
  // would leave for the browser's own UI: wrap around inside the sheet instead.
  d.addEventListener("keydown", (e) => {
    if (e.key !== "Tab") return;
    const items = [...d.querySelectorAll("button, input, select, textarea, a[href], [tabindex]:not([tabindex='-1'])")]
      .filter((el) => !el.disabled && el.getClientRects().length);
    if (!items.length) return;
    const first = items[0], last = items[items.length - 1];
    if (e.shiftKey && (document.activeElement === first || !d.contains(document.activeElement))) { e.preventDefault(); last.focus(); }
    else if (!e.shiftKey && (document.activeElement === last || !d.contains(document.activeElement))) { e.preventDefault(); first.focus(); }
  });
  // A click on the backdrop (the dialog box itself, outside its content) closes it.
  d.addEventListener("click", (e) => { if (e.target === d) d.close(); });
  document.body.append(d);
  d.showModal();
  return d;
}

const SHORTCUTS = [
  ["Enter", "Send (queues while a reply is running)"],
  ["Ctrl/⌘ + Enter", "While a reply is running: send now, to steer it (it joins at the reply's next step)"],
  ["Shift + Enter", "New line"],
  ["Esc", "Stop the reply / close a dialog"],
  ["Ctrl/⌘ + N", "New chat"],
  ["Ctrl/⌘ + K", "Search all chats"],
  ["Ctrl/⌘ + ,", "Settings"],
  ["Ctrl/⌘ + Shift + L", "Switch light / dark"],
  ["Ctrl/⌘ + Shift + C", "Copy the last reply"],
  ["↑", "In the empty message box: edit your last message"],
  ["/", "Focus the message box"],
  ["Alt + ↑ / ↓", "Previous / next chat"],
  ["↑ / ↓", "In the chat list: move between chats (Enter opens, F2 renames, Delete deletes)"],
  ["?", "This sheet"],
];

export function openShortcuts() {
  if (document.querySelector("dialog.shortcuts")) return;
  const d = sheet("Keyboard shortcuts",
    h("dl", { class: "keys" }, ...SHORTCUTS.flatMap(([k, v]) => [h("dt", {}, ...k.split(" + ").flatMap((x, i) => [i ? " + " : null, h("kbd", {}, x)])), h("dd", {}, v)])));
  d.classList.add("shortcuts");
}

/** Start a download the server names (Content-Disposition: attachment); the page stays. */
export function download(url) {
  const a = h("a", { href: url, download: "", hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
}

/**
 * System prompt, temperature and reasoning effort of one chat (PATCH /api/chats/{id}), its
 * workspace folder (saved at once), and its tool approvals (views/approvals.js).
 */
export function openChatSettings(chat, onSaved) {
  const p = chat.params || {};
  const prompt = h("textarea", { id: "cs-prompt", rows: 6, maxlength: 8000, value: chat.system_prompt || "", placeholder: "e.g. Answer briefly. Use British spelling." });
  const tempOn = h("input", { type: "checkbox", id: "cs-temp-on", checked: p.temperature != null, "aria-label": "Set a temperature" });
  const temp = h("input", { type: "range", id: "cs-temp", min: 0, max: 2, step: 0.1, value: p.temperature ?? 1, disabled: p.temperature == null });
  const tempOut = h("output", { for: "cs-temp" }, String(p.temperature ?? 1));
  temp.addEventListener("input", () => { tempOut.textContent = temp.value; });
  tempOn.addEventListener("change", () => { temp.disabled = !tempOn.checked; });
  const effort = h("select", { id: "cs-effort" },
    ...[["", "Model default"], ["off", "Off"], ["low", "Low"], ["medium", "Medium"], ["high", "High"]]
      .map(([v, t]) => h("option", { value: v, selected: (p.reasoning_effort || "") === v }, t)));
  const err = h("div", { class: "field-error", role: "alert" });
  // A folder's prompt is read at each request and goes before the chat's own (CONTRACT §12).
  const folder = chat.folder_id ? app.folders?.find((f) => f.id === chat.folder_id) : null;
  const folderNote = folder?.system_prompt
    ? h("div", { class: "hint", id: "cs-prompt-folder" }, `Sent after the system prompt of folder “${folder.name}”.`) : null;
  if (folderNote) prompt.setAttribute("aria-describedby", "cs-prompt-folder");
  // Memory (CONTRACT §8): as the folder says (null), on or off; temporary chats never use it.
  const memoryOn = app.settings?.memory?.enabled !== false;
  const memory = h("select", { id: "cs-memory", "aria-describedby": "cs-memory-hint", disabled: !!chat.temporary },
    ...[["folder", folder ? "As the folder says" : "As Settings say"], ["on", "On"], ["off", "Off"]]
      .map(([v, t]) => h("option", { value: v, selected: memoryChoice(chat.memory) === v }, t)));
  const memoryHint = h("div", { class: "hint", id: "cs-memory-hint" }, chat.temporary
    ? "Temporary chats never read or save memories."
    : `Whether this chat reads your memories and may save new ones. ${followsSentence(folder, memoryOn)}`);
  const form = h("form", { class: "chat-settings" },
    h("div", { class: "field" }, h("label", { for: "cs-prompt" }, "System prompt"), prompt, folderNote),
    h("div", { class: "field" }, h("label", { for: "cs-temp" }, h("span", {}, tempOn, " Temperature "), tempOut), temp,
      h("div", { class: "hint" }, "Lower is steadier, higher is more varied. Unchecked: the model's default.")),
    h("div", { class: "field" }, h("label", { for: "cs-effort" }, "Reasoning effort"), effort),
    h("div", { class: "field" }, h("label", { for: "cs-memory" }, "Use memory"), memory, memoryHint),
    err,
    h("div", { class: "form-row" }, h("button", { type: "submit", class: "primary" }, "Save")));
  const exportUrl = (format) => `/api/chats/${encodeURIComponent(chat.id)}/export?format=${format}`;
  const exports = h("div", { class: "form-row chat-export" }, h("span", { class: "hint" }, "Export this chat:"),
    h("button", { type: "button", class: "ghost", onclick: () => download(exportUrl("md")) }, "Markdown"),
    h("button", { type: "button", class: "ghost", onclick: () => download(exportUrl("json")) }, "JSON (re-importable)"));
  const d = sheet("Chat settings", form, workspacePicker(chat, onSaved), chatApprovals(chat.id), exports);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const body = {
        system_prompt: prompt.value,
        params: { temperature: tempOn.checked ? Number(temp.value) : null, reasoning_effort: effort.value || null },
      };
      if (!chat.temporary && memoryValue(memory.value) !== (chat.memory ?? null)) body.memory = memoryValue(memory.value);
      const updated = await patch(`/api/chats/${encodeURIComponent(chat.id)}`, body);
      onSaved(updated);
      toast("Chat settings saved.");
      d.close();
    } catch (e2) {
      err.textContent = e2.fields ? Object.values(e2.fields).join(" ") : e2.message;
    }
  });
}
