// Settings → Web search (settings.web_search, CONTRACT §8): the search service (none,
// SearXNG at its address, Brave Search, Tavily), a key-based service's API key (set,
// replaced or removed; kept in the keyring, never shown again) and, while a key is
// missing, the sentence saying web search is off. Built once and updated in place, so
// a redraw never eats what is being typed; Save sends the service, then the key.
import { h } from "../dom.js";
import { del, get, patch, put } from "../api.js";
import { app, schedule } from "../store.js";
import { BACKENDS, backendInfo, searchState } from "../../js/web-search.js";
import { keyKeptWhere } from "./provider-form.js";

export class WebSearchSection {
  constructor() {
    this.backend = h("select", { id: "set-ws-backend", onchange: () => this._show() },
      h("option", { value: "" }, "None"), ...BACKENDS.map((b) => h("option", { value: b.value }, b.long)));
    this.url = h("input", { type: "url", id: "set-ws-url", autocomplete: "off", spellcheck: false,
      placeholder: "http://127.0.0.1:8888", "aria-describedby": "set-ws-url-hint set-ws-url-err" });
    this.urlErr = h("div", { class: "field-error", id: "set-ws-url-err", role: "alert" });
    this.urlField = h("div", { class: "field s-row" }, h("label", { for: this.url.id }, "SearXNG address"), this.url,
      h("div", { class: "hint", id: "set-ws-url-hint" }, "The instance's base address. Its JSON output must be on (search.formats in settings.yml)."),
      this.urlErr);
    this.key = h("input", { type: "password", id: "set-ws-key", autocomplete: "off",
      "aria-describedby": "set-ws-key-hint set-ws-key-err" });
    this.keyLabel = h("label", { for: this.key.id }, "API key");
    this.keyChip = h("span", { class: "chip" });
    this.keyHint = h("div", { class: "hint", id: "set-ws-key-hint" });
    this.keyErr = h("div", { class: "field-error", id: "set-ws-key-err", role: "alert" });
    this.removeKey = h("button", { type: "button", class: "ghost", onclick: () => this._removeKey() }, "Remove key");
    this.keyField = h("div", { class: "field s-row" }, this.keyLabel, h("div", { class: "row" }, this.key, this.keyChip, this.removeKey),
      this.keyHint, this.keyErr);
    this.save = h("button", { type: "submit", class: "primary" }, "Save");
    this.status = h("p", { class: "form-status", role: "status" });
    this.state = h("p", { class: "notice web-search-state", role: "note" });
    const form = h("form", { class: "provider-form", novalidate: true },
      h("div", { class: "field s-row" }, h("label", { for: this.backend.id }, "Search service"), this.backend),
      this.urlField, this.keyField, h("div", { class: "form-row" }, this.save, this.status));
    form.addEventListener("submit", (e) => { e.preventDefault(); this._save(); });
    this.el = h("div", { class: "card web-search" },
      h("p", { class: "hint" }, "With a search service set, models that use tools get a web_search tool, and their "
        + "replies cite what they found as [1], [2]… Links open in your browser."),
      this.state, form);
    this.shown = null; // the saved settings the form last showed
  }

  _saved() {
    return app.settings?.web_search || { backend: null, has_key: false };
  }

  /** Show the saved settings; what the person is changing stays unless `force`. */
  update(force = false) {
    const ws = this._saved();
    const key = JSON.stringify([ws, app.settings?.keyring]);
    if (!force && key === this.shown) return;
    this.shown = key;
    this.backend.value = ws.backend || "";
    this.url.value = ws.url || "";
    const { on, sentence } = searchState(ws);
    this.state.textContent = sentence;
    this.state.classList.toggle("warn", !on && !!ws.backend);
    this._show();
  }

  /** The fields the chosen service needs: its address (SearXNG), its key (Brave, Tavily). */
  _show() {
    const info = backendInfo(this.backend.value);
    const ws = this._saved();
    this.urlField.hidden = info?.value !== "searxng";
    this.keyField.hidden = !info?.key;
    if (!info?.key) return;
    // Whether a key is set is known for the saved service only.
    const saved = ws.backend === info.value;
    const has = saved && !!ws.has_key;
    this.keyLabel.textContent = `API key for ${info.label}`;
    this.key.placeholder = has ? "Replace the key…" : "Paste the API key…";
    this.keyChip.hidden = !saved;
    this.keyChip.textContent = has ? "key set" : "no key";
    this.keyChip.className = has ? "chip ok" : "chip";
    this.removeKey.hidden = !has;
    this.keyHint.textContent = keyKeptWhere(app.settings?.keyring);
  }

  _fieldErrors(fields) {
    let shown = false;
    for (const [name, text] of Object.entries(fields || {})) {
      const target = /api_key|key$/.test(name) ? [this.keyErr, this.key] : /url/.test(name) ? [this.urlErr, this.url] : null;
      if (!target) continue;
      target[0].textContent = text;
      target[1].setAttribute("aria-invalid", "true");
      shown = true;
    }
    return shown;
  }

  _clearErrors() {
    for (const [err, input] of [[this.urlErr, this.url], [this.keyErr, this.key]]) {
      err.textContent = "";
      input.removeAttribute("aria-invalid");
    }
  }

  async _save() {
    this._clearErrors();
    const info = backendInfo(this.backend.value);
    const body = { backend: info?.value || null };
    if (info?.value === "searxng") {
      body.url = this.url.value.trim();
      if (!body.url) {
        this._fieldErrors({ url: "Enter the address of your SearXNG instance, such as http://127.0.0.1:8888." });
        this.url.focus();
        return;
      }
    }
    const apiKey = info?.key ? this.key.value.trim() : "";
    this.save.disabled = true;
    this.status.textContent = "Saving…";
    try {
      app.settings = await patch("/api/settings", { web_search: body });
      if (apiKey) {
        await put("/api/settings/web_search/key", { api_key: apiKey });
        this.key.value = "";
        app.settings = await get("/api/settings");
      }
      this.status.textContent = info ? `Saved: ${searchState(this._saved()).sentence}` : "Saved: web search is off.";
      this.update(true);
      schedule();
    } catch (err) {
      this.status.textContent = this._fieldErrors(err.fields) ? "Check the fields above." : err.message;
    } finally {
      this.save.disabled = false;
    }
  }

  async _removeKey() {
    this._clearErrors();
    try {
      await del("/api/settings/web_search/key");
      app.settings = await get("/api/settings");
      this.status.textContent = `Key removed. ${searchState(this._saved()).sentence}`;
      this.update(true);
      schedule();
      this.key.focus();
    } catch (err) {
      this.status.textContent = err.message;
    }
  }
}
