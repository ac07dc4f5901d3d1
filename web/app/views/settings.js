// Settings, in sections (a nav on the left, one section shown, deep-linked as
// #/settings/<id>): providers, models (default, capabilities, fallbacks), long
// conversations (views/compaction-settings.js), tools and approvals (views/approvals.js,
// the shell's network and sandbox), MCP servers (views/mcp.js), web search
// (views/web-search-settings.js), the local sites web fetch may read (views/web-fetch-settings.js),
// research limits (views/research-settings.js), the image backend (views/images-settings.js),
// voice: dictation and reading aloud (views/voice-settings.js),
// knowledge bases (views/knowledge-settings.js),
// personal context (views/personal-settings.js), memory (views/memory-settings.js),
// the prompt library (views/prompts-settings.js),
// appearance, your data, and advanced (keyring, catalog.toml).
// A search box shows the matching rows of every section at once.
// Lists redraw when their data changes; the add forms are built once, so a redraw
// never eats what someone is typing.
import { h } from "../dom.js";
import { del, patch, put, post } from "../api.js";
import { app, schedule } from "../store.js";
import { reloadCatalog, findModels, setDefaultModel, loadSuggestions, KIND_LABEL } from "../catalog.js";
import { providerForm, refreshKeyHints } from "./provider-form.js";
import { toast } from "./toast.js";
import { download } from "./dialogs.js";
import { getTheme, setTheme } from "../theme.js";
import { ApprovalsSection } from "./approvals.js";
import { shellSandboxLine } from "./workspace.js";
import { McpSection } from "./mcp.js";
import { CompactionSection } from "./compaction-settings.js";
import { windowField } from "./model-window.js";
import { WebSearchSection } from "./web-search-settings.js";
import { ResearchSection } from "./research-settings.js";
import { ImagesSection } from "./images-settings.js";
import { VoiceSection } from "./voice-settings.js";
import { WebFetchSection } from "./web-fetch-settings.js";
import { KnowledgeSection } from "./knowledge-settings.js";
import { PersonalSection } from "./personal-settings.js";
import { MemorySection } from "./memory-settings.js";
import { PromptsSection } from "./prompts-settings.js";
import { SettingsSections } from "./settings-sections.js";
import { filePicker } from "./file-picker.js";
import { importSummary } from "../../js/import-summary.js";

export class SettingsView {
  constructor({ close }) {
    this.notices = h("div", { class: "notices" });
    this.appearance = h("div", { class: "card" });
    this.defaultModel = h("div", { class: "card s-row" });
    this.toolsGeneral = h("div", { class: "card" });
    this.advanced = h("div");
    this.providers = h("div", { class: "provider-list" });
    this.suggest = h("div");
    this.models = h("div", { class: "model-list" });
    this.addModel = this._addModelForm();
    this.compaction = new CompactionSection();
    this.webSearch = new WebSearchSection();
    this.research = new ResearchSection();
    this.images = new ImagesSection();
    this.voice = new VoiceSection();
    this.webFetch = new WebFetchSection();
    this.knowledge = new KnowledgeSection();
    this.personal = new PersonalSection();
    this.memory = new MemorySection();
    this.prompts = new PromptsSection();
    const addProvider = providerForm({
      onAdded: async (p, status) => {
        status.textContent = "Looking for its models…";
        const { added, error } = await findModels(p);
        status.textContent = error ? `Added. ${error.message} You can add a model by name below.` : `Added with ${added.length} model${added.length === 1 ? "" : "s"}.`;
        await reloadCatalog();
        if (!app.settings.default_model_id && added.length) await setDefaultModel(added[0].id);
      },
    });
    this.sections = new SettingsSections([
      { id: "providers", title: "Providers", body: [this.providers, this.suggest,
        h("details", { class: "card s-row" }, h("summary", {}, "Add a provider"), addProvider)] },
      { id: "models", title: "Models", body: [this.defaultModel, this.models,
        h("details", { class: "card s-row" }, h("summary", {}, "Add a model by name"), this.addModel)] },
      { id: "conversations", title: "Long conversations", body: [this.compaction.el] },
      { id: "tools", title: "Tools & approvals", body: [this.toolsGeneral, new ApprovalsSection().el] },
      { id: "mcp", title: "MCP servers", body: [new McpSection().el] },
      { id: "web", title: "Web search", body: [this.webSearch.el] },
      { id: "fetch", title: "Web fetch", body: [this.webFetch.el] },
      { id: "research", title: "Research", body: [this.research.el] },
      { id: "images", title: "Images", body: [this.images.el] },
      { id: "voice", title: "Voice", body: [this.voice.el] },
      { id: "knowledge", title: "Knowledge", body: [this.knowledge.el] },
      { id: "personal", title: "Personal", body: [this.personal.el] },
      { id: "memory", title: "Memory", body: [this.memory.el] },
      { id: "prompts", title: "Prompts", body: [this.prompts.el] },
      { id: "appearance", title: "Appearance", body: [this.appearance] },
      { id: "data", title: "Data", body: [this._dataSection()] },
      { id: "advanced", title: "Advanced", body: [this.advanced] },
    ]);
    this.el = h("section", { class: "settings", "aria-labelledby": "settings-title" },
      h("header", { class: "chat-header" }, h("h1", { id: "settings-title", class: "chat-title" }, "Settings"), h("span", { class: "spacer" }),
        h("button", { type: "button", class: "ghost", "aria-label": "Close settings", onclick: close }, "Close")),
      h("div", { class: "scroller" }, h("div", { class: "settings-body" }, this.notices, this.sections.el)));
    this.key = null;
  }

  render() {
    const parts = [app.providers, app.models, app.settings, app.suggestions, getTheme()];
    if (this.key && parts.every((p, i) => p === this.key[i])) return;
    this.key = parts;
    if (!app.providers || !app.settings) return;
    if (!app.providers.length && app.suggestions === null) loadSuggestions();
    this._notices();
    this._general();
    this._advanced();
    this._providers();
    this._models();
    this._refreshModelForm();
    this.compaction.update();
    this.webSearch.update();
    this.research.update();
    this.images.update();
    this.voice.update();
    this.webFetch.update();
    this.knowledge.update();
    this.personal.update();
    this.memory.update();
  }

  // Built once: an import's result stays on screen while the lists above redraw.
  _dataSection() {
    const status = h("p", { class: "hint data-status", role: "status" });
    const say = (text) => { status.textContent = text; };
    const picker = filePicker({
      id: "import-file", label: "Choose a file to import…", accept: ".json,.zip,application/json,application/zip", describedBy: "import-what",
      onFile: async (chosen) => {
        say(`Importing ${chosen.name}…`);
        const form = new FormData();
        form.append("file", chosen);
        try {
          // Not api(): the browser must set the multipart boundary itself.
          const res = await fetch("/api/import", { method: "POST", body: form, credentials: "same-origin" });
          const body = await res.json().catch(() => null);
          if (!res.ok) throw new Error(body?.error?.message || `The server answered ${res.status}.`);
          say(importSummary(body, chosen.name));
          if (body?.prompts?.added) this.prompts.load();
        } catch (err) { say(err.message); }
      },
    });
    const backup = async () => {
      say("Backing up…");
      try {
        const r = await post("/api/backup");
        say(`Backed up to ${r.path}.`);
      } catch (err) { say(err.message); }
    };
    return h("div", { class: "card data" },
      h("p", { class: "hint" }, "Your chats and files stay on this computer. Export them, bring in chats from another Numi or ChatGPT, or copy the database."),
      h("div", { class: "row s-row" },
        h("button", { type: "button", class: "ghost", onclick: () => download("/api/export") }, "Export everything (.zip)"),
        h("button", { type: "button", class: "ghost", onclick: backup }, "Back up now")),
      h("div", { class: "field s-row" }, h("span", { class: "field-label", id: "import-what" }, "Import a Numi export (.json or .zip) or ChatGPT’s conversations.json / export .zip"), picker),
      status);
  }

  _notices() {
    const out = [];
    const kr = app.settings.keyring;
    if (kr && kr.available === false) {
      out.push(h("div", { class: "notice warn keyring-notice", role: "note" },
        h("strong", {}, "API keys are kept for this run only. "),
        kr.reason || "API keys you enter are kept in memory for this run only and must be entered again after a restart.",
        h("div", { class: "row" }, h("button", { type: "button", class: "ghost", onclick: (e) => this._checkKeyring(e.currentTarget) }, "Check again"))));
    }
    const ce = app.settings.catalog?.error;
    if (ce) {
      out.push(h("div", { class: "notice error", role: "alert" },
        h("strong", {}, `catalog.toml${ce.line ? ` line ${ce.line}` : ""}: `), ce.message,
        h("div", { class: "hint" }, `Numi keeps using the last good catalog until the file is fixed (${app.settings.catalog.path || "catalog.toml"}).`)));
    }
    this.notices.replaceChildren(...out);
  }

  /** Look for the system keyring again (installed or unlocked since Numi started). */
  async _checkKeyring(button) {
    button.disabled = true;
    try {
      app.settings = await post("/api/settings/keyring/check");
      const kr = app.settings.keyring;
      toast(kr.available ? "Found the system keyring: keys are kept there now." : `Looked again: ${kr.cause}.`);
      refreshKeyHints();
      schedule();
    } catch (err) { toast(err.message); } finally { button.disabled = false; }
  }

  _general() {
    const theme = h("select", { id: "set-theme", onchange: () => { setTheme(theme.value); schedule(); } },
      ...[["system", "Follow the system"], ["light", "Light"], ["dark", "Dark"]].map(([v, t]) => h("option", { value: v, selected: getTheme() === v }, t)));
    this.appearance.replaceChildren(h("div", { class: "field inline s-row" }, h("label", { for: "set-theme" }, "Theme"), theme));
    const def = h("select", {
      id: "set-default", onchange: async () => {
        try { await setDefaultModel(def.value || null); toast("Default model saved."); } catch (err) { toast(err.message); }
      },
    }, h("option", { value: "" }, "— none —"), ...app.models.map((m) => h("option", { value: m.id, selected: m.id === app.settings.default_model_id }, `${m.label} · ${this._providerName(m.provider_id)}`)));
    this.defaultModel.replaceChildren(h("div", { class: "field inline" }, h("label", { for: "set-default" }, "Default model for new chats"), def));
    const net = h("input", {
      type: "checkbox", id: "set-shell-network", checked: !!app.settings.shell_network, onchange: async () => {
        try {
          app.settings = await patch("/api/settings", { shell_network: net.checked });
          toast(net.checked ? "Shell commands may use the network." : "Shell commands have no network.");
          schedule();
        } catch (err) { net.checked = !net.checked; toast(err.message); }
      },
    });
    this.toolsGeneral.replaceChildren(h("div", { class: "field s-row" }, h("label", { class: "check", for: net.id }, net, " Shell commands may use the network"),
      shellSandboxLine(true)), this._questionLimit());
  }

  /** How long a question from the model waits for an answer (settings.questions.timeout_s; none by default). */
  _questionLimit() {
    const now = app.settings.questions?.timeout_s ?? null;
    const choices = [[null, "Until I answer"], [60, "1 minute"], [300, "5 minutes"], [900, "15 minutes"], [3600, "1 hour"]];
    if (now !== null && !choices.some(([v]) => v === now)) choices.push([now, `${now} seconds`]);
    const limit = h("select", { id: "set-question-limit", "aria-describedby": "set-question-limit-hint", onchange: async () => {
      try {
        app.settings = await patch("/api/settings", { questions: { timeout_s: limit.value ? Number(limit.value) : null } });
        toast(limit.value ? "Unanswered questions now end after that time." : "Questions wait until you answer.");
        schedule();
      } catch (err) { limit.value = now === null ? "" : String(now); toast(err.message); }
    } }, ...choices.map(([v, t]) => h("option", { value: v === null ? "" : String(v), selected: v === now }, t)));
    return h("div", { class: "field s-row" }, h("label", { for: limit.id }, "Questions from the model wait"), limit,
      h("p", { class: "hint", id: "set-question-limit-hint" }, "Unanswered after this time, the model is told you did not answer and goes on."));
  }

  /** Where keys and the catalog are kept, with the keyring's "Check again". */
  _advanced() {
    const kr = app.settings.keyring;
    const cat = app.settings.catalog;
    this.advanced.replaceChildren(
      h("div", { class: "card s-row" }, h("strong", {}, "API keys"),
        h("p", { class: "hint" }, kr?.available === false ? `Kept for this run only${kr.cause ? `, because ${kr.cause}` : ""}.` : "Kept in the system keyring, never in Numi's files."),
        h("button", { type: "button", class: "ghost", onclick: (e) => this._checkKeyring(e.currentTarget) }, "Look for the keyring again")),
      h("div", { class: "card s-row" }, h("strong", {}, "Catalog file"),
        h("p", { class: "hint" }, "Providers, models and MCP servers are also written to ", h("code", {}, cat?.path || "catalog.toml"),
          ", which you may edit by hand: Numi reads it again when it changes.")));
  }

  _providerName(id) {
    return app.providers.find((p) => p.id === id)?.name || id;
  }

  _providers() {
    if (!app.providers.length) {
      this.providers.replaceChildren(h("p", { class: "hint" }, "No providers yet. Add one below, or use a server running on this computer."));
    } else {
      this.providers.replaceChildren(...app.providers.map((p) => this._providerCard(p)));
    }
    const s = app.suggestions || [];
    this.suggest.replaceChildren(...(!app.providers.length && s.length ? [h("h3", {}, "Found on this computer"),
      ...s.map((x) => h("div", { class: "card row" }, h("span", {}, h("strong", {}, x.name), " ", h("code", {}, x.base_url), ` · ${x.models.length} models`),
        h("button", { type: "button", class: "primary", onclick: () => this._useSuggestion(x) }, "Use")))] : []));
  }

  async _useSuggestion(x) {
    try {
      const p = await post("/api/providers", { kind: x.kind, name: x.name, base_url: x.base_url });
      const { added } = await findModels(p, x.models);
      await reloadCatalog();
      if (!app.settings.default_model_id && added.length) await setDefaultModel(added[0].id);
      toast(`${x.name} added.`);
    } catch (err) { toast(err.message); }
  }

  _providerCard(p) {
    const keyInput = h("input", { type: "password", autocomplete: "off", placeholder: p.has_key ? "Replace the key…" : "Paste the API key…", "aria-label": `API key for ${p.name}` });
    const act = (fn, done) => async () => {
      try { await fn(); await reloadCatalog(); if (done) toast(done); } catch (err) { toast(err.message, { ms: 8000 }); }
    };
    const enabled = h("input", { type: "checkbox", checked: p.enabled, id: `en-${p.id}`, onchange: act(() => patch(`/api/providers/${p.id}`, { enabled: enabled.checked })) });
    return h("div", { class: "card provider" },
      h("div", { class: "row" },
        h("span", { class: "grow" }, h("strong", {}, p.name), h("span", { class: "hint" }, ` ${KIND_LABEL[p.kind] || p.kind}`), p.base_url ? h("div", { class: "hint mono" }, p.base_url) : null),
        h("span", { class: p.has_key ? "chip ok" : "chip" }, p.has_key ? "key set" : "no key"),
        h("label", { class: "switch", for: enabled.id }, enabled, " Enabled")),
      h("div", { class: "row" }, keyInput,
        h("button", { type: "button", class: "ghost", onclick: act(async () => { if (!keyInput.value.trim()) throw new Error("Paste a key first."); await put(`/api/providers/${p.id}/key`, { api_key: keyInput.value.trim() }); }, "Key saved.") }, "Save key"),
        p.has_key ? h("button", { type: "button", class: "ghost", onclick: act(() => del(`/api/providers/${p.id}/key`), "Key removed.") }, "Remove key") : null),
      h("div", { class: "row" },
        h("button", { type: "button", class: "ghost", onclick: act(async () => { const r = await findModels(p); if (r.error) throw r.error; toast(r.added.length ? `Found ${r.added.length} new model(s).` : "No new models."); }) }, "Find models"),
        h("span", { class: "spacer" }),
        h("button", { type: "button", class: "ghost danger-text", onclick: act(async () => { if (confirm(`Remove ${p.name} and its models?`)) await del(`/api/providers/${p.id}`); }) }, "Remove provider")));
  }

  _models() {
    if (!app.models.length) {
      this.models.replaceChildren(h("p", { class: "hint" }, "No models yet. Use “Find models” on a provider, or add one by name."));
      return;
    }
    this.models.replaceChildren(...app.models.map((m) => this._modelRow(m)));
  }

  _modelRow(m) {
    const save = async (body) => {
      try { await patch(`/api/models/${m.id}`, body); } catch (err) { toast(err.message, { ms: 8000 }); }
      await reloadCatalog();
    };
    const sup = ["tools", "vision", "reasoning"].map((k) => {
      const box = h("input", { type: "checkbox", checked: !!m.supports?.[k], id: `sup-${m.id}-${k}`, onchange: () => save({ supports: { [k]: box.checked } }) });
      return h("label", { class: "check", for: box.id }, box, " " + k);
    });
    const others = app.models.filter((o) => o.id !== m.id && !m.fallbacks.includes(o.id));
    const addFb = h("select", {
      "aria-label": `Add a fallback for ${m.label}`,
      onchange: () => addFb.value && save({ fallbacks: [...m.fallbacks, addFb.value] }),
    }, h("option", { value: "" }, "+ fallback…"), ...others.map((o) => h("option", { value: o.id }, o.label)));
    const fbs = m.fallbacks.map((id, i) => h("span", { class: "chip" }, `${i + 1}. ${app.models.find((o) => o.id === id)?.label || id}`,
      h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Remove fallback ${id}`, onclick: () => save({ fallbacks: m.fallbacks.filter((x) => x !== id) }) }, h("span", { class: "i i-close", "aria-hidden": "true" }))));
    return h("div", { class: "card model" },
      h("div", { class: "row" },
        h("span", { class: "grow" }, h("strong", {}, m.label), h("span", { class: "hint mono" }, ` ${m.api_model}`),
          h("div", { class: "hint" }, `${this._providerName(m.provider_id)} · ${m.wire_api}${m.context_window ? ` · ${m.context_window.toLocaleString()} context` : ""}`)),
        m.id === app.settings.default_model_id ? h("span", { class: "chip ok" }, "default") : null,
        h("button", { type: "button", class: "ghost danger-text", "aria-label": `Delete model ${m.label}`, onclick: async () => {
          try { await del(`/api/models/${m.id}`); } catch (err) { toast(err.message); }
          await reloadCatalog();
        } }, "Delete")),
      h("div", { class: "row" }, h("span", { class: "hint" }, "Supports:"), ...sup),
      windowField(m, save),
      // What Numi learned about the model (a provider refusing its tools, say), where it is set.
      m.note ? h("p", { class: "hint model-note" }, m.note) : null,
      h("div", { class: "row" }, h("span", { class: "hint" }, "If it fails, try:"), ...fbs, others.length ? addFb : null));
  }

  _addModelForm() {
    this.mfProvider = h("select", { id: "mf-provider" });
    const name = h("input", { type: "text", id: "mf-name", placeholder: "e.g. llama3.2:3b", autocomplete: "off" });
    const label = h("input", { type: "text", id: "mf-label", placeholder: "optional", autocomplete: "off" });
    const status = h("div", { class: "form-status", role: "status" });
    const form = h("form", { class: "provider-form" },
      h("div", { class: "field" }, h("label", { for: "mf-provider" }, "Provider"), this.mfProvider),
      h("div", { class: "field" }, h("label", { for: "mf-name" }, "Model name at the provider"), name),
      h("div", { class: "field" }, h("label", { for: "mf-label" }, "Label"), label),
      h("div", { class: "form-row" }, h("button", { type: "submit", class: "primary" }, "Add model"), status));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const body = { provider_id: this.mfProvider.value, api_model: name.value.trim() };
        if (label.value.trim()) body.label = label.value.trim();
        const m = await post("/api/models", body);
        name.value = label.value = "";
        status.textContent = `Added ${m.label}.`;
        await reloadCatalog();
        if (!app.settings.default_model_id) await setDefaultModel(m.id);
      } catch (err) {
        status.textContent = err.fields ? Object.values(err.fields).join(" ") : err.message;
      }
    });
    return form;
  }

  _refreshModelForm() {
    const cur = this.mfProvider.value;
    this.mfProvider.replaceChildren(...app.providers.map((p) => h("option", { value: p.id, selected: p.id === cur }, p.name)));
  }
}
