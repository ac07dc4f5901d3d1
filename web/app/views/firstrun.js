// First run (no provider yet): the shortest path to a first answer. Servers found
// on this computer are one click; otherwise a key for OpenAI or Anthropic, or the
// address of any OpenAI-compatible server. Then pick a model and start a chat.
// The form starts on the kind of what was found here (an OpenAI-compatible server,
// its address as the example), else on OpenAI. "+ New chat" before a model is
// connected cannot open a chat: it brings the person to the form and says why.
import { h } from "../dom.js";
import { post } from "../api.js";
import { app } from "../store.js";
import { reloadCatalog, findModels, setDefaultModel, loadSuggestions, pickDefault } from "../catalog.js";
import { providerForm } from "./provider-form.js";

export class FirstRunView {
  /** @param done () => void — called once a default model is set */
  constructor({ done }) {
    this.done = done;
    this.local = h("div", { class: "local-list", "aria-live": "polite" }, h("p", { class: "hint" }, "Looking for model servers on this computer…"));
    this.step2 = h("div", { class: "card", hidden: true });
    this.note = h("p", { class: "notice info firstrun-note", role: "status", hidden: true });
    this.form = providerForm({
      kind: "openai",
      submitLabel: "Connect",
      onAdded: async (provider, status) => {
        status.textContent = "Connected. Looking for its models…";
        const { added, error } = await findModels(provider);
        await reloadCatalog();
        if (error || !added.length) {
          status.textContent = error ? error.message : "";
          this._manualModel(provider, error);
        } else {
          status.textContent = "";
          this._choose(provider, added);
        }
      },
    });
    this.el = h("section", { class: "firstrun", "aria-labelledby": "fr-title" },
      h("div", { class: "scroller" }, h("div", { class: "firstrun-body" },
        h("img", { src: "icons/numi.svg", alt: "", width: 56, height: 56, class: "firstrun-logo" }),
        h("h1", { id: "fr-title" }, "Welcome to Numi"),
        h("p", { class: "lead" }, "Connect a model, and you're ready to chat. Your chats stay on this computer."),
        this.step2,
        h("h2", {}, "Model servers on this computer"), this.local,
        h("h2", {}, "Or connect a provider"), h("div", { class: "card" }, this.note, this.form))));
    this.key = null;
  }

  render() {
    if (app.suggestions === null) { loadSuggestions(); return; }
    if (this.key === app.suggestions) return;
    this.key = app.suggestions;
    const s = app.suggestions;
    if (s.length) this.form.startOn(s[0].kind, s[0].base_url);
    if (!s.length) {
      this.local.replaceChildren(h("p", { class: "hint" }, "None found (Numi looked for Ollama, LM Studio, llama.cpp and vLLM on their usual ports). Start one and ",
        h("button", { type: "button", class: "link", onclick: () => { app.suggestions = null; this.render(); } }, "look again"), "."));
      return;
    }
    this.local.replaceChildren(...s.map((x) => h("div", { class: "card row" },
      h("span", { class: "grow" }, h("strong", {}, x.name), " ", h("code", {}, x.base_url),
        h("div", { class: "hint" }, x.models.length ? `${x.models.length} model${x.models.length === 1 ? "" : "s"}: ${x.models.slice(0, 4).join(", ")}${x.models.length > 4 ? "…" : ""}` : "No models loaded yet")),
      h("button", { type: "button", class: "primary", onclick: (e) => this._useLocal(x, e.currentTarget) }, "Use this"))));
  }

  /** "+ New chat" (or the app focusing this screen): a chat needs a model, so show the way to one. */
  focus() {
    this.note.hidden = false;
    this.note.textContent = "A chat needs a model first: connect one here, or use a server found on this computer above. Then New chat opens a chat.";
    this.note.scrollIntoView({ block: "nearest" });
    (this.local.querySelector(".card button.primary:not(:disabled)") || this.form.querySelector("select, input"))?.focus();
  }

  async _useLocal(x, btn) {
    btn.disabled = true;
    btn.textContent = "Connecting…";
    try {
      const p = await post("/api/providers", { kind: x.kind, name: x.name, base_url: x.base_url });
      const { added } = await findModels(p, x.models);
      await reloadCatalog();
      btn.textContent = "Connected"; // stays disabled: this server is added now
      if (added.length) this._choose(p, added);
      else this._manualModel(p, null);
    } catch (err) {
      btn.disabled = false;
      btn.textContent = "Use this";
      this.local.append(h("p", { class: "field-error", role: "alert" }, err.message));
    }
  }

  /** A provider is connected: the note that asked for one (focus()) no longer holds. */
  _connected() {
    this.note.hidden = true;
    this.note.textContent = "";
  }

  _choose(provider, models) {
    this._connected();
    const sel = h("select", { id: "fr-model" }, ...models.map((m) => h("option", { value: m.id, selected: m.id === pickDefault(models) }, m.label || m.api_model)));
    const go = h("button", { type: "button", class: "primary", onclick: async () => {
      go.disabled = true;
      await setDefaultModel(sel.value);
      this.done();
    } }, "Start chatting");
    this.step2.hidden = false;
    this.step2.replaceChildren(h("h2", {}, `${provider.name} is connected`),
      h("div", { class: "field" }, h("label", { for: "fr-model" }, "Model to chat with"), sel), go);
    this.step2.scrollIntoView({ block: "nearest" });
    go.focus();
  }

  _manualModel(provider, error) {
    this._connected();
    const name = h("input", { type: "text", id: "fr-mname", placeholder: "e.g. gpt-4o-mini, llama3.2", autocomplete: "off" });
    const status = h("div", { class: "field-error", role: "alert" }, error ? `Could not list its models: ${error.message}` : "");
    const form = h("form", {}, h("div", { class: "field" }, h("label", { for: "fr-mname" }, "Model name"), name),
      h("button", { type: "submit", class: "primary" }, "Add and start chatting"), status);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const m = await post("/api/models", { provider_id: provider.id, api_model: name.value.trim() });
        await reloadCatalog();
        await setDefaultModel(m.id);
        this.done();
      } catch (err) { status.textContent = err.fields ? Object.values(err.fields).join(" ") : err.message; }
    });
    this.step2.hidden = false;
    this.step2.replaceChildren(h("h2", {}, `${provider.name} is connected`), h("p", {}, "Which model should Numi use?"), form);
    name.focus();
  }
}
