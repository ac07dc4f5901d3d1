// A chat's workspace (docs/PROTOCOL.md "Workspaces and built-in tools"): the one folder
// its file tools and shell can reach. "Choose folder…" asks the desktop app for its
// native folder dialog (POST /api/desktop/pick-folder → {"path": string|null}); in a
// browser that route is missing (404, or 405 from the headless server: a page cannot
// learn a folder's path), so the full path is typed instead. Either way the chat is PATCHed with {"workspace": path}; the server
// checks the folder and its 422 sentence (`fields.workspace`) is shown under the field.
// Under it, one line says how the shell runs here (GET /api/settings `shell_sandbox`,
// docs/PROTOCOL.md "Shell sandbox"): sandboxed, or not — and then it asks before every command.
import { h } from "../dom.js";
import { patch, post } from "../api.js";
import { app } from "../store.js";

/**
 * The shell's confinement in one sentence.
 * @param inSettings said in Settings (beside the network switch) rather than beside one chat's folder
 */
export function shellSandboxLine(inSettings = false) {
  const sb = app.settings?.shell_sandbox;
  if (!sb) return null;
  if (sb.available) {
    const folder = inSettings ? "the chat's workspace folder" : "this folder";
    const lead = `The shell runs in a sandbox: it can change only ${folder}, reads the rest of the system but not your home folder or Numi's data, and has `;
    if (inSettings) return h("p", { class: "hint shell-sandbox" }, `${lead}the network only while the switch above is on.`);
    // The switch lives in Settings → Tools & approvals (settings.js, section "tools").
    return h("p", { class: "hint shell-sandbox" }, lead, app.settings.shell_network ? "the network (" : "no network (",
      h("a", { href: "#/settings/tools" }, "Settings → Tools & approvals"), ").");
  }
  return h("div", { class: "notice warn shell-sandbox", role: "note" },
    h("strong", {}, "No sandbox for the shell. "),
    `${sb.reason} Its commands can read everything you can, so it asks before every command, whatever the approval settings.`);
}

// Learned once per page: the browser has no folder chooser, so type the path straight away.
let noPicker = false;

/**
 * @param chat the chat as GET /api/chats/{id} gives it (`workspace`: a path or null)
 * @param onSaved (chat) → void, with the PATCH's answer
 */
export function workspacePicker(chat, onSaved) {
  let current = chat.workspace || null;
  const shown = h("code", { class: "workspace-path" });
  const none = h("span", { class: "hint" }, "None: file tools and the shell are off in this chat.");
  const status = h("p", { class: "hint", role: "status" });
  const error = h("div", { class: "field-error", id: "ws-error", role: "alert" });
  const input = h("input", { type: "text", id: "ws-path", class: "mono", autocomplete: "off", spellcheck: false,
                             placeholder: "/home/you/projects/site", "aria-describedby": "ws-error ws-typed-hint" });
  const use = h("button", { type: "button", class: "ghost", onclick: () => save(input.value.trim()) }, "Use this folder");
  const typed = h("div", { class: "field workspace-typed", hidden: true },
    h("label", { for: "ws-path" }, "Folder path"),
    h("div", { class: "row" }, input, use),
    h("div", { class: "hint", id: "ws-typed-hint" }, "The folder's full path. This window cannot open a folder chooser."));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); save(input.value.trim()); }
  });
  const choose = h("button", { type: "button", class: "ghost", onclick: () => pick() }, "Choose folder…");
  const remove = h("button", { type: "button", class: "ghost danger-text", "aria-label": "Remove the workspace", onclick: () => save(null) }, "Remove");

  const draw = () => {
    shown.textContent = current || "";
    shown.hidden = !current;
    shown.title = current || "";
    none.hidden = !!current;
    remove.hidden = !current;
    choose.hidden = noPicker;
    choose.textContent = current ? "Choose another folder…" : "Choose folder…";
    if (noPicker) typed.hidden = false;
  };
  const fail = (message) => {
    error.textContent = message;
    input.setAttribute("aria-invalid", "true");
    status.textContent = "";
  };

  async function save(path) {
    if (path === "") { typed.hidden = false; fail("Type the folder's full path."); input.focus(); return; }
    error.textContent = "";
    input.removeAttribute("aria-invalid");
    try {
      const updated = await patch(`/api/chats/${encodeURIComponent(chat.id)}`, { workspace: path });
      current = updated.workspace || null;
      onSaved(updated);
      status.textContent = current ? `Workspace: ${current}` : "Workspace removed.";
      if (current) input.value = "";
      draw();
    } catch (err) {
      fail(err.fields?.workspace || (err.fields ? Object.values(err.fields).join(" ") : err.message));
      if (!typed.hidden) input.focus();
    }
  }

  async function pick() {
    if (!noPicker) {
      try {
        const r = await post("/api/desktop/pick-folder");
        if (r?.path) await save(r.path);
        return; // null: the person cancelled the dialog
      } catch (err) {
        // No such route here (a server without the desktop app: 404, or 405 where another
        // route owns the address): type the path instead.
        if (err.status !== 404 && err.status !== 405) { fail(err.message); return; }
        noPicker = true;
      }
    }
    draw();
    typed.hidden = false;
    input.focus();
  }

  draw();
  return h("section", { class: "sheet-section workspace", "aria-labelledby": "ws-title" },
    h("h3", { id: "ws-title" }, "Workspace"),
    h("p", { class: "hint" }, "The one folder this chat's file tools and shell can reach."),
    h("div", { class: "row workspace-now" }, shown, none),
    h("div", { class: "row" }, choose, remove),
    typed, error, status, shellSandboxLine());
}
