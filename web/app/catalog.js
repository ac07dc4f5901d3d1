// Providers, models and settings: loading them into the store and the few
// multi-step actions the settings panel and the first-run screen share.
import { get, post, patch } from "./api.js";
import { app, schedule } from "./store.js";
import { adoptUiChoices } from "./ui-choices.js";

export async function reloadCatalog() {
  const [providers, models, settings] = await Promise.all([get("/api/providers"), get("/api/models"), get("/api/settings")]);
  app.providers = providers;
  app.models = models;
  app.settings = settings;
  adoptUiChoices(settings.ui);
  schedule();
}

export async function loadSuggestions() {
  try {
    app.suggestions = (await post("/api/providers/suggestions")).items || [];
  } catch {
    app.suggestions = [];
  }
  schedule();
}

/** Ask the provider for its models; falls back to `names` (e.g. from a local-server probe). */
export async function findModels(provider, names = []) {
  let added = [];
  let error = null;
  try {
    added = (await post(`/api/providers/${encodeURIComponent(provider.id)}/discover`)).added || [];
  } catch (err) {
    error = err;
  }
  if (error && names.length) {
    added = [];
    for (const api_model of names) {
      try { added.push(await post("/api/models", { provider_id: provider.id, api_model })); } catch { /* a duplicate or a bad name: skip it */ }
    }
    if (added.length) error = null;
  }
  return { added, error };
}

export async function setDefaultModel(id) {
  app.settings = await patch("/api/settings", { default_model_id: id });
  schedule();
}

/** Guess a good first default: the first chat-ish model, skipping embedding/audio ones. */
export function pickDefault(models) {
  const chatty = models.filter((m) => !/embed|whisper|tts|dall-e|moderation|image|audio|rerank/i.test(m.api_model));
  return (chatty[0] || models[0])?.id || null;
}

export const KIND_LABEL = { openai: "OpenAI", anthropic: "Anthropic", openai_compatible: "OpenAI-compatible server" };
export const BASE_URL_HINT = {
  openai: "https://api.openai.com/v1 (leave empty for OpenAI's own)",
  anthropic: "https://api.anthropic.com (leave empty for Anthropic's own)",
  openai_compatible: "http://127.0.0.1:11434/v1",
};
