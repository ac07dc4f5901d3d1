// Settings → Images (settings.images, CONTRACT §13, docs/PROTOCOL.md "Images"): which backend draws
// — none, the OpenAI images API of an OpenAI or OpenAI-compatible provider (its model picked from
// what the provider lists, POST /api/images/models, or typed), or a Stable Diffusion server's sdapi
// at its address — and the default size. Save sends the whole object (a PATCH replaces it); what the
// server refuses (422) is said under its field and nothing is saved. Built once and updated in
// place, so a redraw never eats what is being typed.
import { h } from "../dom.js";
import { patch, post } from "../api.js";
import { app, schedule } from "../store.js";
import { BACKENDS, SIZES, drawingProviders, fieldOf, imagesBody } from "../../js/images.js";

const FIELDS = ["backend", "provider_id", "model", "url", "size"];

export class ImagesSection {
  constructor() {
    this.inputs = {};
    this.errors = {};
    const err = (key) => (this.errors[key] = h("p", { class: "field-error", id: `set-img-${key}-err`, role: "alert" }));
    this.inputs.backend = h("select", { id: "set-img-backend", "aria-describedby": "set-img-backend-err",
      onchange: () => this._backendChanged() },
    h("option", { value: "" }, "None"), ...BACKENDS.map((b) => h("option", { value: b.value }, b.label)));
    this.inputs.provider_id = h("select", { id: "set-img-provider", "aria-describedby": "set-img-provider-hint set-img-provider_id-err",
      onchange: () => this._listModels() });
    this.providerHint = h("p", { class: "hint", id: "set-img-provider-hint" });
    this.providerField = h("div", { class: "field s-row" }, h("label", { for: "set-img-provider" }, "Provider"),
      this.inputs.provider_id, this.providerHint, err("provider_id"));
    this.modelList = h("datalist", { id: "set-img-models" });
    this.inputs.model = h("input", { type: "text", id: "set-img-model", list: "set-img-models", autocomplete: "off",
      spellcheck: false, "aria-describedby": "set-img-model-hint set-img-models-status set-img-model-err" });
    this.modelLabel = h("label", { for: "set-img-model" }, "Model");
    this.modelHint = h("p", { class: "hint", id: "set-img-model-hint" });
    this.findModels = h("button", { type: "button", class: "ghost", onclick: () => this._listModels() }, "Find image models");
    this.modelsStatus = h("p", { class: "hint", id: "set-img-models-status", role: "status" });
    this.modelField = h("div", { class: "field s-row" }, this.modelLabel,
      h("div", { class: "model-row" }, this.inputs.model, this.findModels), this.modelList, this.modelHint,
      this.modelsStatus, err("model"));
    this.inputs.url = h("input", { type: "url", id: "set-img-url", autocomplete: "off", spellcheck: false,
      placeholder: "http://127.0.0.1:7860", "aria-describedby": "set-img-url-hint set-img-url-err" });
    this.urlField = h("div", { class: "field s-row" }, h("label", { for: "set-img-url" }, "Server address"), this.inputs.url,
      h("p", { class: "hint", id: "set-img-url-hint" }, "The base address of an Automatic1111, Forge or stable-diffusion.cpp "
        + "server (started with its API on). Numi posts to its /sdapi/v1/txt2img."), err("url"));
    this.inputs.size = h("input", { type: "text", id: "set-img-size", list: "set-img-sizes", autocomplete: "off",
      spellcheck: false, placeholder: "The backend's default", "aria-describedby": "set-img-size-hint set-img-size-err" });
    this.sizeField = h("div", { class: "field s-row" }, h("label", { for: "set-img-size" }, "Default size"), this.inputs.size,
      h("datalist", { id: "set-img-sizes" }, ...SIZES.map((s) => h("option", { value: s }))),
      h("p", { class: "hint", id: "set-img-size-hint" }, "Width x height in pixels, such as 1024x1024 (64 to 8,192 a side); "
        + "“auto” lets an OpenAI model choose. Empty: the backend's own default. The model may ask for another size."),
      err("size"));
    this.save = h("button", { type: "submit", class: "primary" }, "Save");
    this.status = h("p", { class: "form-status", role: "status" });
    this.state = h("p", { class: "notice images-state", role: "note", hidden: true });
    const form = h("form", { class: "provider-form", novalidate: true },
      h("div", { class: "field s-row" }, h("label", { for: "set-img-backend" }, "Image backend"), this.inputs.backend,
        err("backend")),
      this.providerField, this.urlField, this.modelField, this.sizeField, h("div", { class: "form-row" }, this.save, this.status));
    form.addEventListener("submit", (e) => { e.preventDefault(); this._save(); });
    this.el = h("div", { class: "card images-settings" },
      h("p", { class: "hint" }, "With a backend set, models that use tools get an image_generate tool, and the Image "
        + "button by the message box draws what your message describes. Drawn images are kept with the chat."),
      this.state, form);
    this.shown = null; // the saved setting (and providers) the form last showed
    this.listedFor = null; // the provider whose image models the list holds
  }

  _saved() {
    return app.settings?.images || { backend: null };
  }

  /** Show the saved setting; what the person is changing stays unless `force` (or the setting changed). */
  update(force = false) {
    const saved = this._saved();
    const providers = drawingProviders(app.providers);
    const key = JSON.stringify([saved, providers.map((p) => [p.id, p.name, p.enabled])]);
    if (!force && key === this.shown) return;
    const settingChanged = force || JSON.stringify(saved) !== JSON.stringify(this.shownSaved ?? null);
    this.shown = key;
    this.shownSaved = saved;
    this._providers(providers, settingChanged ? saved.provider_id : this.inputs.provider_id.value);
    if (settingChanged) {
      this.inputs.backend.value = saved.backend || "";
      this.inputs.model.value = saved.model || "";
      this.inputs.url.value = saved.url || "";
      this.inputs.size.value = saved.size || "";
      this._clearErrors();
    }
    const problem = typeof saved.problem === "string" ? saved.problem : "";
    this.state.hidden = !problem;
    this.state.textContent = problem;
    this.state.classList.toggle("warn", !!problem);
    this._show();
  }

  /** The provider choices: OpenAI and OpenAI-compatible ones; `chosen` stays chosen (even if gone). */
  _providers(providers, chosen) {
    const options = providers.map((p) => h("option", { value: p.id }, p.enabled ? p.name : `${p.name} (turned off)`));
    if (chosen && !providers.some((p) => p.id === chosen)) {
      options.push(h("option", { value: chosen }, "A provider no longer in the catalog"));
    }
    this.inputs.provider_id.replaceChildren(h("option", { value: "" }, "— choose a provider —"), ...options);
    this.inputs.provider_id.value = chosen || "";
    this.providerHint.textContent = providers.length
      ? "An OpenAI or OpenAI-compatible provider of Settings → Providers: it draws with its own address and key."
      : "No OpenAI or OpenAI-compatible provider yet: add one in Settings → Providers first.";
  }

  /** The fields the chosen backend takes. */
  _show() {
    const backend = this.inputs.backend.value;
    const openai = backend === "openai";
    this.providerField.hidden = !openai;
    this.urlField.hidden = backend !== "sdapi";
    this.modelField.hidden = !backend;
    this.sizeField.hidden = !backend;
    this.findModels.hidden = !openai;
    this.modelLabel.textContent = openai ? "Model" : "Checkpoint (optional)";
    this.inputs.model.placeholder = openai ? "gpt-image-1" : "The server's current checkpoint";
    this.inputs.model.setAttribute("list", openai ? "set-img-models" : "");
    this.modelHint.textContent = openai
      ? "The provider's name for its image model. Pick one it lists, or type it."
      : "The checkpoint the server switches to before drawing; empty: the one it has loaded.";
    if (!openai) this.modelsStatus.textContent = "";
  }

  _backendChanged() {
    this._show();
    // Switched to OpenAI with a provider already chosen: what it lists is looked up once.
    if (this.inputs.backend.value === "openai" && this.inputs.provider_id.value
        && this.listedFor !== this.inputs.provider_id.value) this._listModels();
  }

  /** The chosen provider's image models, offered for the model field (typing any other stays possible). */
  async _listModels() {
    const id = this.inputs.provider_id.value;
    this.listedFor = id || null;
    this.modelList.replaceChildren();
    if (!id) { this.modelsStatus.textContent = ""; return; }
    this.modelsStatus.textContent = "Looking for its image models…";
    try {
      const r = await post("/api/images/models", { provider_id: id });
      if (this.listedFor !== id) return; // another provider was chosen meanwhile
      const items = Array.isArray(r?.items) ? r.items : [];
      this.modelList.replaceChildren(...items.map((m) => h("option", { value: m.api_model }, m.label || m.api_model)));
      this.modelsStatus.textContent = items.length
        ? `It lists ${items.length} image model${items.length === 1 ? "" : "s"}: ${items.map((m) => m.api_model).join(", ")}. Pick one or type another.`
        : "It lists no image models; type the model's name.";
    } catch (err) {
      if (this.listedFor !== id) return;
      this.modelsStatus.textContent = `${err.message} You can still type the model's name.`;
    }
  }

  _clearErrors() {
    for (const key of FIELDS) {
      this.errors[key].textContent = "";
      this.inputs[key].removeAttribute("aria-invalid");
    }
  }

  /** Say each of the server's sentences under its field; true when every one found a field. */
  _fieldErrors(fields) {
    let first = null;
    let all = true;
    for (const [name, text] of Object.entries(fields || {})) {
      const key = fieldOf(name);
      if (!key) { all = false; continue; }
      this.errors[key].textContent = text;
      this.inputs[key].setAttribute("aria-invalid", "true");
      first ??= this.inputs[key];
    }
    first?.focus();
    return !!first && all;
  }

  async _save() {
    this._clearErrors();
    const body = imagesBody(Object.fromEntries(FIELDS.map((k) => [k, this.inputs[k].value])));
    this.save.disabled = true;
    this.status.textContent = "Saving…";
    try {
      app.settings = await patch("/api/settings", { images: body });
      this.status.textContent = body.backend ? "Saved." : "Saved: images are off.";
      this.update(true);
      schedule();
    } catch (err) {
      const shown = err.fields && this._fieldErrors(err.fields);
      this.status.textContent = shown ? "Not saved: check the fields above."
        : err.fields ? Object.values(err.fields).join(" ") : err.message;
    } finally {
      this.save.disabled = false;
    }
  }
}
