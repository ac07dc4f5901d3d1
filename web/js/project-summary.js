// What a folder (a project, CONTRACT §12) applies to a new chat made in it, as short phrases:
// its model, mode and params (copied when the chat is made), its instructions, knowledge
// bases, tools off and memory (read at each request). Only what the folder sets is listed.
// Pure, no DOM (tested in tests/js/project-summary.test.mjs); views/chat-banner.js shows it.
//
// Names, the prompt and tool names are the person's own text: returned as strings, which the
// view sets as text.

import { modeInfo } from "./plans.js";

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const strings = (v) => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
const finite = (v) => typeof v === "number" && Number.isFinite(v);

/** Characters as a person counts them (an emoji is one), not UTF-16 units. */
export function charCount(text) {
  return [...String(text ?? "")].length;
}

/** A model's name in the window: its label, else its API name. */
function modelName(model) {
  return model.label || model.api_model || model.id;
}

function paramPhrases(params) {
  const p = params && typeof params === "object" ? params : {};
  const out = [];
  if (finite(p.temperature)) out.push({ kind: "temperature", text: `temperature ${p.temperature}` });
  if (finite(p.top_p)) out.push({ kind: "top_p", text: `top-p ${p.top_p}` });
  if (finite(p.max_tokens)) out.push({ kind: "max_tokens", text: `replies up to ${plural(p.max_tokens, "token")}` });
  if (typeof p.reasoning_effort === "string" && p.reasoning_effort) {
    out.push({ kind: "reasoning_effort",
      text: p.reasoning_effort === "off" ? "reasoning off" : `reasoning effort ${p.reasoning_effort}` });
  }
  return out;
}

/**
 * The bases a folder names, by name in its order, and how many of its ids no base has;
 * `bases` null (not read yet, or unreadable): only how many it names.
 */
function knowledgePhrase(ids, bases) {
  if (!ids.length) return null;
  if (!Array.isArray(bases)) return { kind: "knowledge", text: `knowledge: ${plural(ids.length, "base")}` };
  const byId = new Map(bases.filter((b) => b && typeof b.id === "string").map((b) => [b.id, b]));
  const names = ids.filter((id) => byId.has(id)).map((id) => String(byId.get(id).name ?? ""));
  const missing = ids.length - names.length;
  const lost = missing ? `${plural(missing, "base")} not found` : "";
  const text = names.length ? `knowledge: ${names.join(", ")}${lost ? ` (${lost})` : ""}` : `knowledge: ${lost}`;
  return { kind: "knowledge", text, names, missing };
}

/**
 * The phrases of what `folder` applies to a new chat in it, in the order the window shows them:
 * [{kind, text, detail?}], `detail` being the full text behind a short phrase (the instructions,
 * the tools' names). Empty when the folder sets nothing beyond its name.
 * @param models the models the window knows (GET /api/models); a model not among them was removed
 * @param bases the knowledge bases (GET /api/knowledge items), or null when not read
 */
export function projectSummary(folder, { models = [], bases = null } = {}) {
  if (!folder || typeof folder !== "object") return [];
  const out = [];
  if (typeof folder.model_id === "string" && folder.model_id) {
    const model = (Array.isArray(models) ? models : []).find((m) => m?.id === folder.model_id);
    out.push(model ? { kind: "model", text: `model ${modelName(model)}` }
      // The new chat then starts with the default model (main.js newChatView).
      : { kind: "model", text: "a removed model (the default is used)", removed: true });
  }
  // Ask is what a folder that sets no mode gives: the server shows it either way.
  if (typeof folder.mode === "string" && folder.mode !== "ask") {
    out.push({ kind: "mode", text: `${modeInfo(folder.mode).label} mode` });
  }
  out.push(...paramPhrases(folder.params));
  const prompt = typeof folder.system_prompt === "string" ? folder.system_prompt : "";
  if (prompt.trim()) {
    out.push({ kind: "instructions", text: `its instructions (${plural(charCount(prompt), "character")})`, detail: prompt });
  }
  const knowledge = knowledgePhrase(strings(folder.knowledge_ids), bases);
  if (knowledge) out.push(knowledge);
  const off = strings(folder.tools_off);
  if (off.length) out.push({ kind: "tools_off", text: `${plural(off.length, "tool")} off`, detail: off.join(", ") });
  // Absent (no memory feature) or true: on, as the server reads it.
  if (folder.memory === false) out.push({ kind: "memory", text: "memory off" });
  return out;
}
