// Settings → MCP servers (docs/PROTOCOL.md "MCP servers"): the servers whose tools models
// may call. Each shows its transport, what it runs or where it is, its status (a crash's
// or an unavailable server's sentence included), Enabled, and Show tools (starts it:
// POST …/tools, 502 with the sentence when it cannot; a GET never starts anything), Restart,
// Edit and Remove. A form adds one (stdio: a program on this computer; http: an address);
// a 422's sentences show by their fields. Secret header values go to the keyring: only
// their names come back. Built once with the settings view; it reads its list itself,
// again after every change (listing never starts a server, so that is cheap).
// A server that needs OAuth (CONTRACT §15) shows "Needs sign-in" or "Signed in as …" with
// Sign in / Sign out: Sign in opens the server's page in the system browser and polls the
// status until it changes (or SIGN_IN_WAIT_MS pass), the sign-in coming back on loopback.
import { h } from "../dom.js";
import { get, post, patch, del } from "../api.js";
import { confirmSheet } from "./folders.js";

const SIGN_IN_WAIT_MS = 5 * 60_000;
const SIGN_IN_POLL_MS = 1_000;
const STATE_TEXT = { stopped: "stopped", starting: "starting…", running: "running", crashed: "crashed", unavailable: "unavailable" };
const enc = encodeURIComponent;
let forms = 0;

/** `NAME=value` lines (sep "=") or `Name: value` lines (sep ":") → an object; throws a sentence. */
export function parsePairs(text, sep, what) {
  const out = {};
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(sep);
    if (at <= 0) throw new Error(`Line ${i + 1}: write ${what}.`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** Secret headers: `Name: value` (a new value) or `Name` alone (keep the value it has). */
export function parseSecrets(text) {
  const names = [];
  const values = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(":");
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    names.push(name);
    const value = at < 0 ? "" : line.slice(at + 1).trim();
    if (value) values[name] = value;
  }
  return { names, values };
}

const lines = (items) => (items || []).join("\n");
const pairs = (obj, sep) => Object.entries(obj || {}).map(([k, v]) => `${k}${sep}${v}`).join("\n");

/**
 * The add / edit form.
 * @param server null to add one, else the server as listed (its id cannot change)
 * @param done (server) → void after a successful save
 */
function serverForm(server, done, cancel) {
  const n = ++forms;
  const id = (name) => `mcp${n}-${name}`;
  const errors = {};
  const field = (name, label, input, help, extra) => {
    input.id = id(name);
    const hint = help ? h("div", { class: "hint", id: id(name) + "-hint" }, help) : null;
    const err = h("div", { class: "field-error", id: id(name) + "-err", role: "alert" });
    input.setAttribute("aria-describedby", [hint?.id, err.id].filter(Boolean).join(" "));
    errors[name] = { err, input };
    return h("div", { class: "field", dataset: { field: name } }, h("label", { for: input.id }, label), input, hint, err, extra);
  };
  const showError = (name, msg) => {
    const target = errors[name] || errors.form;
    target.err.textContent = msg;
    if (!target.input) return;
    if (msg) target.input.setAttribute("aria-invalid", "true"); else target.input.removeAttribute("aria-invalid");
  };
  const s = server || {};
  const sid = h("input", { type: "text", autocomplete: "off", spellcheck: false, placeholder: "e.g. files", maxlength: 128, value: s.id || "" });
  const transport = h("select", {},
    h("option", { value: "stdio", selected: (s.transport || "stdio") === "stdio" }, "A program on this computer (stdio)"),
    h("option", { value: "http", selected: s.transport === "http" }, "An address (Streamable HTTP)"));
  const command = h("input", { type: "text", class: "mono", autocomplete: "off", spellcheck: false, placeholder: "npx", value: s.command || "" });
  const args = h("textarea", { class: "mono", rows: 3, spellcheck: false, placeholder: "-y\n@modelcontextprotocol/server-filesystem\n/home/you/notes", value: lines(s.args) });
  const env = h("textarea", { class: "mono", rows: 2, spellcheck: false, placeholder: "LOG_LEVEL=info", value: pairs(s.env, "=") });
  const cwd = h("input", { type: "text", class: "mono", autocomplete: "off", spellcheck: false, placeholder: "(Numi's own)", value: s.cwd || "" });
  const url = h("input", { type: "url", class: "mono", autocomplete: "off", spellcheck: false, placeholder: "http://127.0.0.1:8000/mcp", value: s.url || "" });
  const headers = h("textarea", { class: "mono", rows: 2, spellcheck: false, placeholder: "X-Workspace: notes", value: pairs(s.headers, ": ") });
  const secrets = h("textarea", { class: "mono", rows: 2, spellcheck: false, placeholder: "Authorization: Bearer …", value: lines(s.secret_headers) });
  const enabled = h("input", { type: "checkbox", id: id("enabled"), checked: s.enabled ?? true });
  const timeout = h("input", { type: "number", min: 1, max: 600, step: 1, value: s.call_timeout ?? 60, class: "narrow" });
  const status = h("div", { class: "form-status", role: "status" });
  errors.form = { err: h("div", { class: "field-error", role: "alert" }) };
  const setSecretHint = server?.secret_headers?.length
    ? `Values are kept in your system's keyring and never shown. Set now: ${(server.secret_headers_set || []).join(", ") || "none"}. A name alone keeps its value; a name left out loses it.`
    : "Values are kept in your system's keyring and never shown, nor written to catalog.toml.";
  const stdioBox = h("div", { class: "mcp-transport" },
    field("command", "Command", command, "The program to run, found on the PATH or as a full path."),
    field("args", "Arguments", args, "One per line."),
    field("env", "Environment", env, "NAME=value, one per line. No secrets here: it is written to catalog.toml."),
    field("cwd", "Working folder", cwd, "A full path; empty for Numi's own."));
  const httpBox = h("div", { class: "mcp-transport" },
    field("url", "Address", url),
    field("headers", "Headers", headers, "Name: value, one per line. No secrets here: they are written to catalog.toml."),
    field("secret_headers", "Secret headers", secrets, setSecretHint));
  const sync = () => {
    stdioBox.hidden = transport.value !== "stdio";
    httpBox.hidden = transport.value !== "http";
  };
  transport.addEventListener("change", sync);
  sync();
  const submit = h("button", { type: "submit", class: "primary" }, server ? "Save" : "Add server");
  const form = h("form", { class: "mcp-form", novalidate: true, "aria-label": server ? `Edit MCP server ${server.id}` : "Add an MCP server" },
    server ? null : field("id", "Id", sid, "Letters, digits and . _ : @ -. Models see its tools as mcp__<id>__<tool>."),
    field("transport", "Runs as", transport),
    stdioBox, httpBox,
    field("call_timeout", "Time limit per call (seconds)", timeout),
    h("div", { class: "field" }, h("label", { class: "check", for: enabled.id }, enabled, " Enabled")),
    errors.form.err,
    h("div", { class: "form-row" }, submit,
      cancel ? h("button", { type: "button", class: "ghost", onclick: cancel }, "Cancel") : null, status));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    Object.keys(errors).forEach((k) => showError(k, ""));
    const body = { transport: transport.value, enabled: enabled.checked, call_timeout: Number(timeout.value) };
    if (!server) body.id = sid.value.trim();
    try {
      if (transport.value === "stdio") {
        body.command = command.value.trim();
        body.args = args.value.split("\n").map((a) => a.trim()).filter(Boolean);
        try { body.env = parsePairs(env.value, "=", "NAME=value"); } catch (err) { showError("env", err.message); throw err; }
        body.cwd = cwd.value.trim() || null;
      } else {
        body.url = url.value.trim();
        try { body.headers = parsePairs(headers.value, ":", "Name: value"); } catch (err) { showError("headers", err.message); throw err; }
        const { names, values } = parseSecrets(secrets.value);
        body.secret_headers = names;
        if (Object.keys(values).length) body.secret_header_values = values;
      }
    } catch {
      status.textContent = "Check the fields above.";
      return;
    }
    submit.disabled = true;
    status.textContent = server ? "Saving…" : "Adding…";
    try {
      const saved = server ? await patch(`/api/mcp/servers/${enc(server.id)}`, body) : await post("/api/mcp/servers", body);
      status.textContent = "";
      if (!server) { sid.value = command.value = cwd.value = url.value = ""; args.value = env.value = headers.value = secrets.value = ""; }
      done(saved);
    } catch (err) {
      status.textContent = err.fields ? "Check the fields above." : "";
      if (!err.fields) showError("form", err.message);
      for (const [k, msg] of Object.entries(err.fields || {})) {
        showError(k === "secret_header_values" ? "secret_headers" : k, msg);
      }
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export class McpSection {
  constructor() {
    this.list = h("div", { class: "mcp-list" }, h("p", { class: "hint" }, "Loading…"));
    this.status = h("p", { class: "hint mcp-status", role: "status" });
    this.add = h("details", { class: "card mcp-add" }, h("summary", {}, "Add an MCP server"),
      serverForm(null, (saved) => {
        this.add.open = false;
        this.say(`Added ${saved.id}. It starts when a chat first offers its tools, or with Show tools.`);
        this.load();
      }));
    this.tools = new Map(); // server id → the tools (or the error) last shown
    this.waiting = new Map(); // server id → {auth, error, until, timer}: a sign-in open in the browser
    this.editing = null;
    this.el = h("div", { class: "mcp-settings" },
      h("p", { class: "hint" }, "Servers whose tools models may call (as mcp__<server>__<tool>), with the approvals below. "
        + "A server starts when a chat offers its tools."),
      this.list,
      h("div", { class: "row" }, h("button", { type: "button", class: "ghost", onclick: () => this.load() }, "Refresh status")),
      this.add, this.status);
    this.load();
  }

  say(text, isError = false) {
    this.status.textContent = text;
    this.status.classList.toggle("error-text", isError);
  }

  async load() {
    try {
      this.servers = await get("/api/mcp/servers");
      this.draw();
    } catch (err) {
      this.list.replaceChildren(h("p", { class: "field-error", role: "alert" }, `The MCP servers could not be read: ${err.message}`));
    }
  }

  draw() {
    // Keep the focus on the same control across the redraw (a button of the same server).
    const active = document.activeElement;
    const focusKey = this.list.contains(active) ? active.dataset.focusKey : null;
    if (!this.servers.length) {
      this.list.replaceChildren(h("p", { class: "hint mcp-empty" }, "No MCP servers yet. Add one below."));
    } else {
      this.list.replaceChildren(h("ul", { class: "mcp-servers", "aria-label": "MCP servers" }, ...this.servers.map((s) => this._card(s))));
    }
    if (focusKey) this.list.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  /** Run an action on a server; its error goes to the status line; the list is read again. */
  async _act(s, fn) {
    try {
      return await fn();
    } catch (err) {
      this.say(`${s.id}: ${err.message}`, true);
      return undefined;
    } finally {
      await this.load();
    }
  }

  /** The sign-in line of a server that needs OAuth: its state, the last failure, Sign in / Sign out. */
  _auth(s) {
    const st = s.status || {};
    if (!st.auth) return null;
    const key = (what) => `${s.id}:${what}`;
    const waiting = this.waiting.has(s.id);
    const signedIn = st.auth === "signed_in";
    const text = waiting ? "Waiting for the browser…" : signedIn ? (st.account ? `Signed in as ${st.account}` : "Signed in") : "Needs sign-in";
    const button = signedIn && !waiting
      ? h("button", { type: "button", class: "ghost", dataset: { focusKey: key("sign-out") }, "aria-label": `Sign out of ${s.id}`,
        onclick: () => this._signOut(s) }, "Sign out")
      : h("button", { type: "button", class: waiting ? "ghost" : "primary", dataset: { focusKey: key("sign-in") },
        "aria-label": `${waiting ? "Sign in again to" : "Sign in to"} ${s.id}`, onclick: () => this._signIn(s) },
      waiting ? "Open the page again" : "Sign in");
    return h("div", { class: "mcp-auth", dataset: { auth: waiting ? "waiting" : st.auth } },
      h("div", { class: "row" },
        h("span", { class: `chip mcp-auth-state${signedIn && !waiting ? " ok" : ""}` }, text),
        h("span", { class: "spacer" }), button),
      st.auth_error && !waiting ? h("p", { class: "mcp-error mcp-auth-error", role: "note" }, st.auth_error) : null,
      st.auth_storage === "memory"
        ? h("p", { class: "hint mcp-auth-storage" }, "No keyring on this computer: tokens are kept only until Numi quits.") : null);
  }

  async _signIn(s) {
    this._stopWaiting(s.id);
    let url;
    try {
      ({ authorize_url: url } = await post(`/api/mcp/servers/${enc(s.id)}/sign-in`));
    } catch (err) {
      this.say(`${s.id}: ${err.message}`, true);
      await this.load();
      return;
    }
    // The desktop window sends an outside address to the system browser; never opened inside.
    window.open(url, "_blank", "noopener");
    // A started sign-in clears the last one's failure on the server, so the error to compare
    // with is none: the drawn one would read as a change at the first poll.
    this.waiting.set(s.id, { auth: s.status?.auth ?? null, error: null,
                             until: Date.now() + SIGN_IN_WAIT_MS, timer: 0 });
    this.say(`Sign in to ${s.id} in your browser; this page follows when you are done.`);
    this.draw();
    this._poll(s.id);
  }

  /** Read a waiting server's status every second until its sign-in state or its error changes. */
  _poll(id) {
    const w = this.waiting.get(id);
    if (!w) return;
    w.timer = setTimeout(async () => {
      if (this.waiting.get(id) !== w) return;
      // The settings screen was closed: nobody is looking.
      if (!this.el.isConnected) { this.waiting.delete(id); return; }
      let server = null;
      try { server = await get(`/api/mcp/servers/${enc(id)}`); } catch { /* a passing failure: read again */ }
      if (this.waiting.get(id) !== w) return;
      const st = server?.status || {};
      const changed = server && ((st.auth ?? null) !== w.auth || (st.auth_error ?? null) !== w.error);
      if (changed || Date.now() >= w.until) {
        this.waiting.delete(id);
        if (!changed) this.say(`${id}: the sign-in was not finished in time. Press Sign in to try again.`, true);
        else if (st.auth === "signed_in") this.say(`Signed in to ${id}${st.account ? ` as ${st.account}` : ""}.`);
        else this.say(`${id}: ${st.auth_error || "the sign-in did not finish."}`, true);
        await this.load();
        return;
      }
      this._poll(id);
    }, SIGN_IN_POLL_MS);
  }

  _stopWaiting(id) {
    clearTimeout(this.waiting.get(id)?.timer);
    this.waiting.delete(id);
  }

  async _signOut(s) {
    this._stopWaiting(s.id);
    await this._act(s, async () => {
      await del(`/api/mcp/servers/${enc(s.id)}/sign-in`);
      this.say(`Signed out of ${s.id}; its tokens are forgotten.`);
    });
  }

  _card(s) {
    const key = (what) => `${s.id}:${what}`;
    const where = s.transport === "stdio" ? [s.command, ...(s.args || [])].join(" ") : s.url;
    const state = s.status?.state || "stopped";
    const enabled = h("input", { type: "checkbox", id: `mcp-en-${s.id}`, checked: s.enabled, dataset: { focusKey: key("enabled") },
      onchange: () => this._act(s, async () => {
        await patch(`/api/mcp/servers/${enc(s.id)}`, { enabled: enabled.checked });
        this.say(`${s.id} is ${enabled.checked ? "on" : "off: its tools are not offered and it is stopped"}.`);
      }) });
    const shown = this.tools.get(s.id);
    const toolsBox = h("div", { class: "mcp-tools", hidden: !shown });
    if (shown?.error) {
      toolsBox.append(h("p", { class: "field-error", role: "alert" }, shown.error));
    } else if (shown) {
      toolsBox.append(shown.tools.length
        ? h("ul", { class: "mcp-tool-list", "aria-label": `Tools of ${s.id}` }, ...shown.tools.map((t) => h("li", {},
          h("code", { class: "mcp-tool-name", title: t.name }, t.mcp_name || t.name),
          t.description ? h("span", { class: "hint" }, " — " + t.description) : null)))
        : h("p", { class: "hint" }, "This server offers no tools."));
    }
    const buttons = h("div", { class: "row" },
      h("button", { type: "button", class: "ghost", dataset: { focusKey: key("tools") }, "aria-expanded": String(!!shown),
        "aria-label": `${shown ? "Hide" : "Show"} tools of ${s.id}`,
        onclick: async () => {
          if (shown) { this.tools.delete(s.id); this.draw(); return; }
          this.say(`Starting ${s.id}…`);
          try {
            const { tools } = await post(`/api/mcp/servers/${enc(s.id)}/tools`);
            this.tools.set(s.id, { tools });
            this.say(`${s.id} offers ${tools.length} tool${tools.length === 1 ? "" : "s"}.`);
          } catch (err) {
            this.tools.set(s.id, { error: err.message });
            this.say("");
          }
          await this.load();
        } }, shown ? "Hide tools" : "Show tools"),
      h("button", { type: "button", class: "ghost", dataset: { focusKey: key("restart") }, "aria-label": `Restart ${s.id}`,
        onclick: () => this._act(s, async () => {
          this.say(`Restarting ${s.id}…`);
          const st = await post(`/api/mcp/servers/${enc(s.id)}/restart`);
          this.tools.delete(s.id);
          this.say(`${s.id}: ${STATE_TEXT[st?.state] || st?.state || "restarted"}${st?.error ? ` — ${st.error}` : ""}.`, !!st?.error);
        }) }, "Restart"),
      h("button", { type: "button", class: "ghost", dataset: { focusKey: key("edit") }, "aria-label": `Edit ${s.id}`, "aria-expanded": String(this.editing === s.id),
        onclick: () => { this.editing = this.editing === s.id ? null : s.id; this.draw(); } }, "Edit"),
      h("span", { class: "spacer" }),
      h("button", { type: "button", class: "ghost danger-text", dataset: { focusKey: key("remove") }, "aria-label": `Remove ${s.id}`,
        onclick: async () => {
          const sure = await confirmSheet({ title: `Remove ${s.id}?`, confirm: "Remove server",
            message: "It stops, models no longer get its tools, and its secret header values leave the keyring." });
          if (!sure) return;
          await this._act(s, async () => {
            await del(`/api/mcp/servers/${enc(s.id)}`);
            this.tools.delete(s.id);
            this.say(`Removed ${s.id}.`);
          });
        } }, "Remove"));
    // The open edit form survives redraws (another server's action), so typing is kept.
    if (this.editing !== s.id && this.editForm?.id === s.id) this.editForm = null;
    if (this.editing === s.id && this.editForm?.id !== s.id) {
      this.editForm = { id: s.id, el: serverForm(s, (saved) => {
        this.editing = null;
        this.editForm = null;
        this.tools.delete(s.id);
        this.say(`Saved ${saved.id}.`);
        this.load();
      }, () => { this.editing = null; this.editForm = null; this.draw(); }) };
    }
    const edit = this.editing === s.id ? this.editForm.el : null;
    return h("li", { class: "card mcp-server", dataset: { id: s.id, state } },
      h("div", { class: "row" },
        h("span", { class: "grow" }, h("strong", { class: "mcp-id" }, s.id), " ",
          h("span", { class: "chip" }, s.transport), " ",
          h("span", { class: `chip mcp-state ${state}`, title: "Status" }, STATE_TEXT[state] || state),
          h("div", { class: "hint mono mcp-where", title: where }, where || ""),
          h("div", { class: "hint" }, `Time limit per call: ${s.call_timeout} s`
            + (s.secret_headers?.length ? ` · secret headers: ${s.secret_headers.map((n) => `${n}${(s.secret_headers_set || []).includes(n) ? "" : " (no value)"}`).join(", ")}` : ""))),
        h("label", { class: "switch", for: enabled.id }, enabled, " Enabled")),
      s.status?.error ? h("p", { class: "mcp-error", role: "note" }, s.status.error) : null,
      this._auth(s),
      buttons, toolsBox, edit);
  }
}
