// Settings → Voice (settings.voice, CONTRACT §14, docs/PROTOCOL.md "Voice"): which engine turns
// dictation into text (offline, or a provider's transcription model) and which reads replies aloud
// (offline with one of the computer's voices from GET /api/audio/voices, or a provider's speech
// model and voice), the reading speed, whether new replies are read as they come, whether a
// dictation is sent at once. Save sends the whole object (a PATCH replaces it); what the server
// refuses (422) is said under its field and nothing is saved. Each engine's `problem` (why it
// cannot work now) is said above its fields. Built once and updated in place.
import { h } from "../dom.js";
import { get, patch } from "../api.js";
import { app, schedule } from "../store.js";

const AUDIO_KINDS = new Set(["openai", "openai_compatible"]);
// OpenAI's speech voices, offered for a provider's voice (any other name can be typed).
const PROVIDER_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse"];
// Each field by its key in a 422's `fields`.
const FIELD_KEYS = {
  "voice.stt.backend": "stt_backend", "voice.stt.provider_id": "stt_provider", "voice.stt.model": "stt_model",
  "voice.tts.backend": "tts_backend", "voice.tts.provider_id": "tts_provider", "voice.tts.model": "tts_model",
  "voice.tts.voice": "tts_voice", "voice.tts.speed": "speed", "voice.auto_read": "auto_read",
  "voice.send_dictation": "send_dictation", "voice.stt": "stt_backend", "voice.tts": "tts_backend", voice: "stt_backend",
};

/** The body of settings.voice from the form's values (strings and booleans). */
export function voiceBody(v) {
  const engine = (backend, provider, model) => (backend === "provider"
    ? { backend, provider_id: provider || null, model: model.trim() || null }
    : { backend: "offline", provider_id: null, model: null });
  const speed = Number(v.speed);
  return {
    stt: engine(v.stt_backend, v.stt_provider, v.stt_model),
    tts: { ...engine(v.tts_backend, v.tts_provider, v.tts_model),
           voice: (v.tts_backend === "provider" ? v.tts_voice : v.offline_voice).trim() || null,
           speed: v.speed === "" || Number.isNaN(speed) ? v.speed : speed },
    auto_read: !!v.auto_read,
    send_dictation: !!v.send_dictation,
  };
}

export class VoiceSection {
  constructor() {
    this.inputs = {};
    this.errors = {};
    const id = (key) => `set-voice-${key}`;
    const err = (key) => (this.errors[key] = h("p", { class: "field-error", id: `${id(key)}-err`, role: "alert" }));
    const field = (key, label, input, ...more) => {
      this.inputs[key] = input;
      input.id = id(key);
      input.setAttribute("aria-describedby", [...more.filter((m) => m?.id).map((m) => m.id), `${id(key)}-err`].join(" "));
      return h("div", { class: "field s-row" }, h("label", { for: id(key) }, label), input, ...more, err(key));
    };
    const engineSelect = (onchange) => h("select", { onchange },
      h("option", { value: "offline" }, "Offline (on this computer)"), h("option", { value: "provider" }, "A provider's API"));
    const providerSelect = () => h("select", {});
    const text = (placeholder, list) => h("input", { type: "text", autocomplete: "off", spellcheck: false, placeholder, list });

    // Speech to text.
    this.sttProblem = h("p", { class: "notice warn voice-problem", role: "note", hidden: true });
    this.sttProvider = field("stt_provider", "Provider", providerSelect(),
      h("p", { class: "hint", id: "set-voice-stt-provider-hint" }, "An OpenAI or OpenAI-compatible provider of Settings → Providers."));
    this.sttModel = field("stt_model", "Transcription model", text("whisper-1"));
    const stt = h("fieldset", { class: "voice-engine" }, h("legend", {}, "Dictation (speech to text)"), this.sttProblem,
      field("stt_backend", "Engine", engineSelect(() => this._show()),
        h("p", { class: "hint", id: "set-voice-stt-hint" }, "Offline needs no network and no key; a provider's model "
          + "usually hears better.")),
      this.sttProvider, this.sttModel,
      field("send_dictation", "Send a dictation at once", h("input", { type: "checkbox" }),
        h("p", { class: "hint", id: "set-voice-send-hint" }, "Off: the text goes into the message box for you to check first.")));

    // Text to speech.
    this.ttsProblem = h("p", { class: "notice warn voice-problem", role: "note", hidden: true });
    this.voicesStatus = h("p", { class: "hint", id: "set-voice-voices-status", role: "status" });
    this.offlineVoice = field("offline_voice", "Voice", h("select", {}), this.voicesStatus);
    this.ttsProvider = field("tts_provider", "Provider", providerSelect());
    this.ttsModel = field("tts_model", "Speech model", text("gpt-4o-mini-tts"));
    this.ttsVoice = field("tts_voice", "Voice", text("alloy", "set-voice-provider-voices"),
      h("datalist", { id: "set-voice-provider-voices" }, ...PROVIDER_VOICES.map((v) => h("option", { value: v }))));
    const tts = h("fieldset", { class: "voice-engine" }, h("legend", {}, "Reading aloud (text to speech)"), this.ttsProblem,
      field("tts_backend", "Engine", engineSelect(() => this._show())),
      this.offlineVoice, this.ttsProvider, this.ttsModel, this.ttsVoice,
      field("speed", "Speed", h("input", { type: "number", min: 0.5, max: 2, step: 0.1, inputmode: "decimal" }),
        h("p", { class: "hint", id: "set-voice-speed-hint" }, "0.5 (slow) to 2 (fast); 1 is the voice's own pace.")),
      field("auto_read", "Read new replies aloud as they come", h("input", { type: "checkbox" }),
        h("p", { class: "hint", id: "set-voice-auto-hint" }, "Any reply can also be read with its speaker button; "
          + "Esc or Stop stops reading.")));

    this.save = h("button", { type: "submit", class: "primary" }, "Save");
    this.status = h("p", { class: "form-status", role: "status" });
    const form = h("form", { class: "provider-form voice-form", novalidate: true }, stt, tts,
      h("div", { class: "form-row" }, this.save, this.status));
    form.addEventListener("submit", (e) => { e.preventDefault(); this._save(); });
    this.el = h("div", { class: "card voice-settings" },
      h("p", { class: "hint" }, "The microphone button by the message box turns what you say into text; the speaker "
        + "button on a reply reads it aloud."), form);
    this.shown = null;
    this.voices = null; // the offline voices, once read
  }

  _saved() {
    return app.settings?.voice || { stt: { backend: "offline" }, tts: { backend: "offline", speed: 1 } };
  }

  /** Show the saved setting; what the person is changing stays unless `force` (or the setting changed). */
  update(force = false) {
    const saved = this._saved();
    const providers = (app.providers || []).filter((p) => AUDIO_KINDS.has(p.kind));
    const key = JSON.stringify([saved, providers.map((p) => [p.id, p.name, p.enabled])]);
    if (!force && key === this.shown) return;
    const settingChanged = force || JSON.stringify(saved) !== JSON.stringify(this.shownSaved ?? null);
    this.shown = key;
    this.shownSaved = saved;
    const stt = saved.stt || {};
    const tts = saved.tts || {};
    this._providers(this.inputs.stt_provider, providers, settingChanged ? stt.provider_id : this.inputs.stt_provider.value);
    this._providers(this.inputs.tts_provider, providers, settingChanged ? tts.provider_id : this.inputs.tts_provider.value);
    if (settingChanged) {
      this.inputs.stt_backend.value = stt.backend === "provider" ? "provider" : "offline";
      this.inputs.stt_model.value = stt.model || "";
      this.inputs.tts_backend.value = tts.backend === "provider" ? "provider" : "offline";
      this.inputs.tts_model.value = tts.backend === "provider" ? tts.model || "" : "";
      this.inputs.tts_voice.value = tts.backend === "provider" ? tts.voice || "" : "";
      this.offlineChoice = tts.backend === "provider" ? "" : tts.voice || "";
      this._voiceOptions();
      this.inputs.speed.value = String(tts.speed ?? 1);
      this.inputs.auto_read.checked = !!saved.auto_read;
      this.inputs.send_dictation.checked = !!saved.send_dictation;
      this._clearErrors();
    }
    this._problem(this.sttProblem, stt.problem);
    this._problem(this.ttsProblem, tts.problem);
    this._show();
  }

  _problem(el, problem) {
    const text = typeof problem === "string" ? problem : "";
    el.hidden = !text;
    el.textContent = text;
  }

  /** A provider choice list; `chosen` stays chosen (even if gone). */
  _providers(select, providers, chosen) {
    const options = providers.map((p) => h("option", { value: p.id }, p.enabled ? p.name : `${p.name} (turned off)`));
    if (chosen && !providers.some((p) => p.id === chosen)) options.push(h("option", { value: chosen }, "A provider no longer in the catalog"));
    select.replaceChildren(h("option", { value: "" }, providers.length ? "— choose a provider —" : "— add one in Settings → Providers —"),
      ...options);
    select.value = chosen || "";
  }

  /** The fields the chosen engines take; the offline voices are read the first time they are needed. */
  _show() {
    const sttProvider = this.inputs.stt_backend.value === "provider";
    const ttsProvider = this.inputs.tts_backend.value === "provider";
    this.sttProvider.hidden = !sttProvider;
    this.sttModel.hidden = !sttProvider;
    this.ttsProvider.hidden = !ttsProvider;
    this.ttsModel.hidden = !ttsProvider;
    this.ttsVoice.hidden = !ttsProvider;
    this.offlineVoice.hidden = ttsProvider;
    if (!ttsProvider && this.voices === null) this._loadVoices();
  }

  async _loadVoices() {
    if (this.voicesLoading) return;
    this.voicesLoading = true;
    this.voicesStatus.textContent = "Looking for this computer's voices…";
    try {
      const r = await get("/api/audio/voices");
      this.voices = Array.isArray(r?.items) ? r.items : [];
      this.voicesStatus.textContent = this.voices.length ? "" : "This computer lists no voices: its default one reads.";
    } catch (err) {
      this.voices = [];
      this.voicesStatus.textContent = err.message;
    } finally {
      this.voicesLoading = false;
    }
    this._voiceOptions();
  }

  _voiceOptions() {
    const select = this.inputs.offline_voice;
    const chosen = this.offlineChoice ?? select.value;
    const items = this.voices || [];
    const options = items.map((v) => h("option", { value: v.id }, v.label || v.id));
    if (chosen && !items.some((v) => v.id === chosen)) options.push(h("option", { value: chosen }, chosen));
    select.replaceChildren(h("option", { value: "" }, "The default voice"), ...options);
    select.value = chosen || "";
    this.offlineChoice = null;
  }

  _clearErrors() {
    for (const [key, el] of Object.entries(this.errors)) {
      el.textContent = "";
      this.inputs[key].removeAttribute("aria-invalid");
    }
  }

  /** Say each of the server's sentences under its field; true when every one found a field. */
  _fieldErrors(fields) {
    let first = null;
    let all = true;
    for (const [name, text] of Object.entries(fields || {})) {
      let key = FIELD_KEYS[name];
      if (key === "tts_voice" && this.inputs.tts_backend.value !== "provider") key = "offline_voice";
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
    const values = Object.fromEntries(Object.entries(this.inputs).map(([k, el]) => [k, el.type === "checkbox" ? el.checked : el.value]));
    const body = voiceBody(values);
    this.save.disabled = true;
    this.status.textContent = "Saving…";
    try {
      app.settings = await patch("/api/settings", { voice: body });
      this.status.textContent = "Saved.";
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
