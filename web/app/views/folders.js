// Sheets for organising chats: a folder's name and defaults, moving a chat to a folder,
// and the confirmation asked before anything is deleted for good. They follow
// dialogs.js: a modal <dialog> with a heading for its name, field errors shown by the
// form (role="alert"), focus back to the opener on close.
import { h } from "../dom.js";
import { app } from "../store.js";
import { sheet } from "./dialogs.js";
import { MODES } from "../../js/plans.js";
import { get } from "../api.js";
import { ToolSwitches } from "./tools-popover.js";
import { folderKnowledge } from "./knowledge-picker.js";

let forms = 0;

function errorText(err) {
  return err.fields ? Object.values(err.fields).join(" ") : err.message;
}

/**
 * The folder's tools switches (CONTRACT §15), read from GET …/tools; saved with the sheet.
 * `list()` is the tools_off to save, or undefined while nothing was switched.
 */
function folderTools(folder) {
  const box = h("fieldset", { class: "field folder-tools" });
  const heading = h("legend", {}, "Tools");
  if (!folder) {
    box.append(heading, h("p", { class: "hint" }, "Once the folder is made, choose here which tools its chats offer."));
    return { el: box, list: () => undefined };
  }
  let changed;
  const switches = new ToolSwitches({ by: "folder", label: "Tools its chats offer", onChange: (list) => { changed = list; } });
  const note = h("p", { class: "hint" }, "Loading…");
  box.append(heading, h("p", { class: "hint" }, "What chats in this folder offer the model, unless a chat chooses its own. "
    + "Each group's cost is what it adds to every request."), note, switches.el);
  get(`/api/folders/${encodeURIComponent(folder.id)}/tools`).then((view) => {
    note.remove();
    switches.show(view);
  }, (err) => { note.textContent = `The tools could not be read: ${err.message}`; note.classList.add("field-error"); });
  return { el: box, list: () => changed };
}

/**
 * Create (folder null) or edit a folder: name, and the model, system prompt, temperature,
 * reasoning effort and mode that new chats made in it start with, the tools its chats offer and
 * the knowledge bases they search.
 * @param save async (body) => folder; an ApiError it throws is shown in the sheet
 * @param importFile async (doc) => void, a folder file's JSON (a new folder only); its ApiError is shown
 */
export function openFolderDialog(folder, save, importFile = null) {
  const n = ++forms;
  const id = (name) => `fd-${name}-${n}`;
  const p = folder?.params || {};
  const name = h("input", { type: "text", id: id("name"), maxlength: 100, required: true, value: folder?.name || "", autocomplete: "off" });
  const current = folder?.model_id || "";
  const models = app.models.map((m) => h("option", { value: m.id, selected: m.id === current }, m.label || m.api_model));
  if (current && !app.models.some((m) => m.id === current)) {
    models.unshift(h("option", { value: current, selected: true }, `${current} (removed)`));
  }
  const model = h("select", { id: id("model") }, h("option", { value: "", selected: !current }, "The app's default model"), ...models);
  const prompt = h("textarea", { id: id("prompt"), rows: 5, maxlength: 8000, value: folder?.system_prompt || "", placeholder: "e.g. You help with this project's code." });
  const tempOn = h("input", { type: "checkbox", id: id("temp-on"), checked: p.temperature != null, "aria-label": "Set a temperature" });
  const temp = h("input", { type: "range", id: id("temp"), min: 0, max: 2, step: 0.1, value: p.temperature ?? 1, disabled: p.temperature == null });
  const tempOut = h("output", { for: id("temp") }, String(p.temperature ?? 1));
  temp.addEventListener("input", () => { tempOut.textContent = temp.value; });
  tempOn.addEventListener("change", () => { temp.disabled = !tempOn.checked; });
  const effort = h("select", { id: id("effort") },
    ...[["", "Model default"], ["off", "Off"], ["low", "Low"], ["medium", "Medium"], ["high", "High"]]
      .map(([v, t]) => h("option", { value: v, selected: (p.reasoning_effort || "") === v }, t)));
  const mode = h("select", { id: id("mode") },
    ...MODES.map((m) => h("option", { value: m.value, title: m.hint, selected: (folder?.mode || "ask") === m.value }, m.label)));
  const tools = folderTools(folder);
  const knowledge = folderKnowledge(folder);
  // Memory (CONTRACT §8, §12): on unless turned off; a chat's own choice wins over it.
  const memoryWas = folder?.memory !== false;
  const memory = h("input", { type: "checkbox", id: id("memory"), checked: memoryWas, "aria-describedby": id("memory-hint") });
  const err = h("div", { class: "field-error", role: "alert" });
  const submit = h("button", { type: "submit", class: "primary" }, folder ? "Save" : "Create folder");
  const form = h("form", { class: "chat-settings folder-form" },
    h("div", { class: "field" }, h("label", { for: id("name") }, "Name"), name),
    h("p", { class: "hint" }, "New chats made in this folder start with its model, temperature, reasoning effort and mode. "
      + "Its system prompt, tools, knowledge and memory apply to every chat in it at each request, unless a chat sets its own."),
    h("div", { class: "field" }, h("label", { for: id("model") }, "Model"), model),
    h("div", { class: "field" }, h("label", { for: id("prompt") }, "System prompt"), prompt),
    h("div", { class: "field" }, h("label", { for: id("temp") }, h("span", {}, tempOn, " Temperature "), tempOut), temp),
    h("div", { class: "field" }, h("label", { for: id("effort") }, "Reasoning effort"), effort),
    h("div", { class: "field" }, h("label", { for: id("mode") }, "Mode"), mode),
    tools.el,
    knowledge.el,
    h("div", { class: "field folder-memory" }, h("label", { class: "check", for: id("memory") }, memory, " Use memory"),
      h("p", { class: "hint", id: id("memory-hint") }, "Chats in this folder read your memories and may save new ones, "
        + "unless a chat chooses otherwise. Off: they neither read nor save any.")),
    err,
    h("div", { class: "form-row" }, submit));
  if (!folder && importFile) form.append(importField(id("import"), err, importFile, () => d.close()));
  const d = sheet(folder ? `Folder “${folder.name}”` : "New folder", form);
  d.classList.add("folder-sheet");
  name.focus();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!name.value.trim()) { err.textContent = "Give the folder a name."; name.focus(); return; }
    const params = { temperature: tempOn.checked ? Number(temp.value) : null, reasoning_effort: effort.value || null };
    const body = { name: name.value.trim(), model_id: model.value || null, system_prompt: prompt.value, params,
                   mode: mode.value };
    if (tools.list() !== undefined) body.tools_off = tools.list();
    if (knowledge.list() !== undefined) body.knowledge_ids = knowledge.list();
    if (memory.checked !== memoryWas) body.memory = memory.checked;
    submit.disabled = true;
    try {
      await save(body);
      d.close();
    } catch (e2) {
      err.textContent = errorText(e2);
      if (e2.fields?.name) name.focus();
    } finally {
      submit.disabled = false;
    }
  });
}

const FOLDER_FILE_MAX = 1024 * 1024; // a folder file is settings: kilobytes, never megabytes

/** "Or import a folder file": a project someone shared (GET /api/folders/{id}/export). */
function importField(inputId, err, importFile, done) {
  const input = h("input", { type: "file", id: inputId, accept: ".json,application/json" });
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    err.textContent = "";
    if (file.size > FOLDER_FILE_MAX) { err.textContent = `“${file.name}” is too large to be a folder file (at most 1 MB).`; return; }
    let doc;
    try { doc = JSON.parse(await file.text()); } catch {
      err.textContent = `“${file.name}” is not a folder file: it is not JSON. Export a folder from its ⋯ menu and import that file.`;
      return;
    }
    input.disabled = true;
    try {
      await importFile(doc);
      done();
    } catch (e) {
      err.textContent = errorText(e);
    } finally {
      input.disabled = false;
    }
  });
  return h("div", { class: "field import-folder" },
    h("label", { for: inputId }, "Or import a folder file (.numi-folder.json)"), input,
    h("p", { class: "hint" }, "A folder someone exported: its settings, never its chats. "
      + "Its model and knowledge bases are matched by name to yours."));
}

/**
 * Move a chat to a folder, to no folder, or to a new folder named here.
 * @param move async (folderId | null, newFolderName | null) => void
 */
export function openMoveDialog(chat, move) {
  const n = ++forms;
  const group = `mv-${n}`;
  const choice = (value, label, checked) => {
    const input = h("input", { type: "radio", name: group, id: `${group}-${value || "none"}`, value, checked });
    return h("div", { class: "check" }, input, h("label", { for: input.id }, label));
  };
  const newName = h("input", { type: "text", id: `${group}-new-name`, maxlength: 100, "aria-label": "New folder name", placeholder: "New folder name", autocomplete: "off" });
  const newChoice = h("input", { type: "radio", name: group, id: `${group}-new`, value: "\u0000new" });
  newName.addEventListener("focus", () => { newChoice.checked = true; });
  const err = h("div", { class: "field-error", role: "alert" });
  const title = chat.title || "New chat";
  const form = h("form", { class: "move-form" },
    h("fieldset", { class: "choices" }, h("legend", {}, `Move “${title}” to`),
      choice("", "No folder", !chat.folder_id),
      ...app.folders.map((f) => choice(f.id, f.name, f.id === chat.folder_id)),
      h("div", { class: "check" }, newChoice, h("label", { for: newChoice.id }, "A new folder:"), newName)),
    err,
    h("div", { class: "form-row" }, h("button", { type: "submit", class: "primary" }, "Move")));
  const d = sheet("Move to folder", form);
  (form.querySelector("input:checked") || form.querySelector("input")).focus();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const picked = form.querySelector(`input[name="${group}"]:checked`)?.value ?? "";
    const making = picked === "\u0000new";
    if (making && !newName.value.trim()) { err.textContent = "Give the new folder a name."; newName.focus(); return; }
    try {
      await move(making ? null : picked || null, making ? newName.value.trim() : null);
      d.close();
    } catch (e2) {
      err.textContent = errorText(e2);
    }
  });
}

/**
 * Ask before something is deleted for good. Resolves true when confirmed.
 * @param {{title: string, message: string, confirm: string}} opts
 */
export function confirmSheet({ title, message, confirm }) {
  return new Promise((resolve) => {
    let answer = false;
    const yes = h("button", { type: "button", class: "danger", onclick: () => { answer = true; d.close(); } }, confirm);
    const no = h("button", { type: "button", onclick: () => d.close() }, "Cancel");
    const d = sheet(title, h("p", {}, message), h("div", { class: "form-row" }, no, yes));
    d.classList.add("confirm-sheet");
    // The safe choice has the focus: Enter right away cancels.
    no.focus();
    d.addEventListener("close", () => resolve(answer));
  });
}
