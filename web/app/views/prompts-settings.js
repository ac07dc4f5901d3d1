// Settings → Prompts (CONTRACT §12): the prompt library. Each prompt has a name, a /command and
// its text; {{name}} in the text asks for that part when the prompt is used (the message box's
// `/` list, views/prompts-menu.js). Listed by name, searched as you type, made, edited in place
// and deleted (asked first). There are no seed prompts: the empty list says how to add one.
// A prompt's text is the person's own: it is shown as text, never as markup.
import { h } from "../dom.js";
import { del, get, patch, post } from "../api.js";
import { confirmSheet } from "./folders.js";
import { commandProblem, preview, promptVariables } from "../../js/prompts.js";

const enc = encodeURIComponent;
let seq = 0;

/** "Asks for: a, b" for a prompt's variables, or "" for none. */
function asksFor(names) {
  return names.length ? `Asks for: ${names.join(", ")}` : "";
}

/** The fields of a prompt (name, command, text) with their error lines; `values` fills them. */
function promptFields(values = {}) {
  const n = ++seq;
  const f = {
    name: h("input", { type: "text", id: `pr-name-${n}`, maxlength: 100, autocomplete: "off", value: values.name || "",
      placeholder: "e.g. Translate" }),
    command: h("input", { type: "text", id: `pr-command-${n}`, maxlength: 32, autocomplete: "off", spellcheck: false,
      class: "mono", value: values.command || "", placeholder: "e.g. translate" }),
    content: h("textarea", { id: `pr-content-${n}`, rows: 5, maxlength: 20000, value: values.content || "",
      placeholder: "Translate {{text}} into {{language}}, keeping its tone." }),
  };
  const errors = {};
  const rows = [];
  for (const [key, label, hint] of [
    ["name", "Name", ""],
    ["command", "Command", "Type / and this at the start of the message box to use the prompt: lowercase letters, digits and hyphens."],
    ["content", "Text", "Write {{name}} where the prompt should ask you for something when you use it."],
  ]) {
    errors[key] = h("div", { class: "field-error", id: `${f[key].id}-err`, role: "alert" });
    const hintEl = hint ? h("div", { class: "hint", id: `${f[key].id}-hint` }, hint) : null;
    f[key].setAttribute("aria-describedby", [hintEl?.id, errors[key].id].filter(Boolean).join(" "));
    const input = key === "command" ? h("div", { class: "pr-command-box" }, h("span", { class: "mono pr-slash", "aria-hidden": "true" }, "/"), f.command) : f[key];
    rows.push(h("div", { class: "field" }, h("label", { for: f[key].id }, label), input, hintEl, errors[key]));
  }
  const asks = h("p", { class: "hint pr-asks", "aria-live": "polite" }, asksFor(promptVariables(f.content.value)));
  f.content.addEventListener("input", () => { asks.textContent = asksFor(promptVariables(f.content.value)); });
  rows.push(asks);
  return {
    f, rows,
    body() { return { name: f.name.value.trim(), command: f.command.value.trim(), content: f.content.value }; },
    clear() {
      for (const key of Object.keys(errors)) { errors[key].textContent = ""; f[key].removeAttribute("aria-invalid"); }
    },
    fail(key, text) {
      errors[key].textContent = text;
      f[key].setAttribute("aria-invalid", "true");
    },
    /** Check before the round trip; the first field at fault gets the focus. Whether all is well. */
    check() {
      const b = this.body();
      const problems = [];
      if (!b.name) problems.push(["name", "Give the prompt a name."]);
      const bad = commandProblem(b.command);
      if (bad) problems.push(["command", bad]);
      if (!b.content.trim()) problems.push(["content", "Write the text the prompt puts in the message box."]);
      problems.forEach(([k, t]) => this.fail(k, t));
      if (problems.length) f[problems[0][0]].focus();
      return !problems.length;
    },
    /** The server's refusal, on its fields (a 409 names `command`); else the sentence under the form. */
    refused(err, status) {
      const keys = Object.keys(err.fields || {}).filter((k) => k in f);
      keys.forEach((k) => this.fail(k, err.fields[k]));
      if (keys.length) f[keys[0]].focus(); else status.textContent = err.message;
    },
  };
}

export class PromptsSection {
  constructor() {
    this.items = [];
    const n = ++seq;
    this.search = h("input", { type: "search", id: `pr-search-${n}`, autocomplete: "off", placeholder: "Search prompts",
      "aria-label": "Search prompts", oninput: () => this._draw() });
    this.list = h("ul", { class: "pr-list", "aria-live": "polite", "aria-busy": "true" });
    this.empty = h("p", { class: "hint pr-empty", role: "status" });
    this.error = h("p", { class: "field-error pr-load-error", role: "alert" });
    this.create = this._createForm();
    this.el = h("div", { class: "prompts" },
      h("p", { class: "hint" }, "Prompts you use again and again, each with a command: type / at the start of the message box "
        + "to pick one, and it fills the box. Where its text says {{name}}, you are asked for that part first."),
      h("div", { class: "row pr-search" }, this.search), this.error, this.list, this.empty, this.create);
    this.load();
  }

  async load() {
    try {
      const { items } = await get("/api/prompts");
      this.items = items;
      this.error.textContent = "";
      this._draw();
    } catch (err) {
      this.error.textContent = `The prompts could not be read: ${err.message}`;
    } finally {
      this.list.setAttribute("aria-busy", "false");
    }
  }

  _draw() {
    const q = this.search.value.trim().toLowerCase().replace(/^\//u, "");
    const shown = q ? this.items.filter((p) => [p.name, p.command, p.content].some((t) => t.toLowerCase().includes(q))) : this.items;
    // A card being edited is kept as it is: a search or a reload never eats what is being typed.
    const editing = new Map([...this.list.querySelectorAll(".pr-item.editing")].map((el) => [el.dataset.id, el]));
    this.list.replaceChildren(...shown.map((p) => editing.get(p.id) || this._item(p)));
    this.empty.textContent = !this.items.length
      ? "No prompts yet. Make one below: give it a name, a command such as summarize and its text; then type /summarize at the start of the message box to use it."
      : shown.length ? "" : `No prompt matches “${this.search.value.trim()}”.`;
    this.empty.hidden = !this.empty.textContent;
    if (!this.items.length) this.create.open = true;
  }

  _item(p) {
    const n = ++seq;
    const title = h("strong", { class: "pr-name", id: `pr-item-${n}` }, p.name);
    const edit = h("button", { type: "button", class: "ghost", "aria-label": `Edit ${p.name}`, onclick: () => this._edit(el, p) }, "Edit");
    const remove = h("button", { type: "button", class: "ghost danger-text", "aria-label": `Delete ${p.name}`, onclick: () => this._delete(p, said) }, "Delete");
    const said = h("p", { class: "hint", role: "status" });
    const el = h("li", { class: "card pr-item s-row", dataset: { id: p.id }, "aria-labelledby": title.id },
      h("div", { class: "row" }, h("span", { class: "grow" }, title, " ", h("code", { class: "pr-command" }, `/${p.command}`)), edit, remove),
      h("p", { class: "pr-preview" }, preview(p.content, 160)),
      p.variables.length ? h("p", { class: "hint pr-asks" }, asksFor(p.variables)) : null, said);
    return el;
  }

  _edit(el, p) {
    const form = promptFields(p);
    const status = h("p", { class: "form-status", role: "status" });
    const save = h("button", { type: "submit", class: "primary" }, "Save");
    const cancel = h("button", { type: "button", class: "ghost", onclick: () => { el.replaceWith(this._item(p)); this._focusItem(p.id); } }, "Cancel");
    const editor = h("form", { class: "provider-form pr-edit", novalidate: true, "aria-label": `Edit ${p.name}` },
      ...form.rows, h("div", { class: "form-row" }, save, cancel, status));
    editor.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); cancel.click(); } });
    editor.addEventListener("submit", async (e) => {
      e.preventDefault();
      form.clear();
      status.textContent = "";
      if (!form.check()) return;
      const body = form.body();
      for (const k of Object.keys(body)) if (body[k] === p[k]) delete body[k];
      save.disabled = true;
      try {
        if (Object.keys(body).length) await patch(`/api/prompts/${enc(p.id)}`, body);
        el.classList.remove("editing");
        await this.load();
        this._focusItem(p.id);
      } catch (err) {
        form.refused(err, status);
      } finally {
        save.disabled = false;
      }
    });
    el.classList.add("editing");
    el.replaceChildren(editor);
    form.f.name.focus();
  }

  _focusItem(id) {
    this.list.querySelector(`.pr-item[data-id="${CSS.escape(id)}"] button`)?.focus();
  }

  async _delete(p, said) {
    const sure = await confirmSheet({ title: `Delete “${p.name}”?`, confirm: "Delete prompt",
      message: `/${p.command} will no longer fill in the message box. This cannot be undone.` });
    if (!sure) return;
    try {
      await del(`/api/prompts/${enc(p.id)}`);
      await this.load();
      this.search.focus();
    } catch (err) {
      said.textContent = err.message;
    }
  }

  _createForm() {
    const form = promptFields();
    const status = h("p", { class: "form-status", role: "status" });
    const submit = h("button", { type: "submit", class: "primary" }, "Save prompt");
    const el = h("form", { class: "provider-form pr-create", novalidate: true },
      ...form.rows, h("div", { class: "form-row" }, submit, status));
    el.addEventListener("submit", async (e) => {
      e.preventDefault();
      form.clear();
      status.textContent = "";
      if (!form.check()) return;
      submit.disabled = true;
      try {
        const made = await post("/api/prompts", form.body());
        for (const input of Object.values(form.f)) input.value = "";
        form.f.content.dispatchEvent(new Event("input"));
        status.textContent = `Saved “${made.name}”: type /${made.command} in the message box to use it.`;
        await this.load();
      } catch (err) {
        form.refused(err, status);
      } finally {
        submit.disabled = false;
      }
    });
    return h("details", { class: "card s-row pr-new" }, h("summary", {}, "Make a prompt"), el);
  }
}
