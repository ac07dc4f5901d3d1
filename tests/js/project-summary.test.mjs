// What a folder applies to a new chat in it, as the new-chat screen lists it (web/js/project-summary.js).
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { charCount, projectSummary } from "../../web/js/project-summary.js";
import { deepFreeze } from "./freeze.mjs";

const MODELS = deepFreeze([
  { id: "m_1", label: "Claude Sonnet", api_model: "claude-sonnet" },
  { id: "m_2", label: "", api_model: "gpt-local" },
]);
const BASES = deepFreeze([
  { id: "k_1", name: "Work notes" },
  { id: "k_2", name: "Specs" },
  { id: "k_3", name: "Unused" },
]);

/** A folder as GET /api/folders gives one that sets nothing beyond its name. */
const plain = (fields = {}) => deepFreeze({
  id: "f_1", name: "Research", model_id: null, system_prompt: "", params: {}, mode: "ask",
  tools_off: null, knowledge_ids: [], memory: true, chat_count: 0, ...fields,
});

const texts = (folder, opts = { models: MODELS, bases: BASES }) => projectSummary(folder, opts).map((p) => p.text);

describe("projectSummary", () => {
  test("a folder that sets nothing beyond its name has nothing to list", () => {
    assert.deepEqual(projectSummary(plain(), { models: MODELS, bases: BASES }), []);
    // Set but empty is the same: [] tools off, null mode, an all-blank prompt, nulls in params.
    assert.deepEqual(texts(plain({ tools_off: [], mode: null, system_prompt: " \n ", params: { temperature: null } })), []);
  });

  test("nothing, or not a folder, lists nothing", () => {
    assert.deepEqual(projectSummary(null), []);
    assert.deepEqual(projectSummary(undefined, { models: MODELS }), []);
    assert.deepEqual(projectSummary("f_1"), []);
  });

  test("everything a folder sets, in order", () => {
    const folder = plain({
      model_id: "m_1", mode: "plan", system_prompt: "x".repeat(312), params: { temperature: 0.3, reasoning_effort: "high" },
      knowledge_ids: ["k_1", "k_2"], tools_off: ["web_search", "shell", "mcp__git__*"], memory: false,
    });
    assert.deepEqual(texts(folder), [
      "model Claude Sonnet", "Plan mode", "temperature 0.3", "reasoning effort high", "its instructions (312 characters)",
      "knowledge: Work notes, Specs", "3 tools off", "memory off",
    ]);
    assert.deepEqual(projectSummary(folder, { models: MODELS, bases: BASES }).map((p) => p.kind), [
      "model", "mode", "temperature", "reasoning_effort", "instructions", "knowledge", "tools_off", "memory",
    ]);
  });

  test("the model by its label, else its API name; a removed one is named as such", () => {
    assert.deepEqual(texts(plain({ model_id: "m_2" })), ["model gpt-local"]);
    const [gone] = projectSummary(plain({ model_id: "m_gone" }), { models: MODELS });
    assert.equal(gone.text, "a removed model (the default is used)");
    assert.equal(gone.removed, true);
    // No models known at all: the folder's model is not among them either.
    assert.deepEqual(texts(plain({ model_id: "m_1" }), {}), ["a removed model (the default is used)"]);
  });

  test("each mode but Ask, by its label", () => {
    assert.deepEqual(texts(plain({ mode: "edit" })), ["Edit mode"]);
    assert.deepEqual(texts(plain({ mode: "auto" })), ["Auto mode"]);
    assert.deepEqual(texts(plain({ mode: "ask" })), []);
  });

  test("each param it sets", () => {
    assert.deepEqual(texts(plain({ params: { temperature: 0, top_p: 0.9, max_tokens: 1, reasoning_effort: "off" } })),
      ["temperature 0", "top-p 0.9", "replies up to 1 token", "reasoning off"]);
    assert.deepEqual(texts(plain({ params: { max_tokens: 4000 } })), ["replies up to 4000 tokens"]);
    assert.deepEqual(texts(plain({ params: null })), []);
  });

  test("the instructions by their length, the whole text kept as given for the view", () => {
    const prompt = "<b>Be brief</b> 🦉\n";
    const [p] = projectSummary(plain({ system_prompt: prompt }));
    assert.equal(p.text, "its instructions (18 characters)");
    assert.equal(p.detail, prompt);
    assert.deepEqual(texts(plain({ system_prompt: "x" })), ["its instructions (1 character)"]);
  });

  test("knowledge bases by name in the folder's order; unknown ids counted, not named", () => {
    assert.deepEqual(texts(plain({ knowledge_ids: ["k_2", "k_1"] })), ["knowledge: Specs, Work notes"]);
    assert.deepEqual(texts(plain({ knowledge_ids: ["k_1", "k_gone"] })), ["knowledge: Work notes (1 base not found)"]);
    assert.deepEqual(texts(plain({ knowledge_ids: ["k_gone", "k_lost"] })), ["knowledge: 2 bases not found"]);
    const [k] = projectSummary(plain({ knowledge_ids: ["k_1", "k_gone"] }), { bases: BASES });
    assert.deepEqual([k.names, k.missing], [["Work notes"], 1]);
  });

  test("bases not read yet: only how many", () => {
    assert.deepEqual(texts(plain({ knowledge_ids: ["k_1"] }), { models: MODELS, bases: null }), ["knowledge: 1 base"]);
    assert.deepEqual(texts(plain({ knowledge_ids: ["k_1", "k_2"] }), {}), ["knowledge: 2 bases"]);
  });

  test("tools off counted, their names kept for the view", () => {
    const [t] = projectSummary(plain({ tools_off: ["shell"] }));
    assert.deepEqual([t.text, t.detail], ["1 tool off", "shell"]);
    assert.equal(projectSummary(plain({ tools_off: ["a", "b"] }))[0].detail, "a, b");
  });

  test("memory: off only when the folder says false", () => {
    assert.deepEqual(texts(plain({ memory: false })), ["memory off"]);
    assert.deepEqual(texts(plain({ memory: true })), []);
    const { memory: _m, knowledge_ids: _k, ...noFeatures } = plain();
    assert.deepEqual(texts(noFeatures), []);
  });
});

test("charCount counts characters as a person does", () => {
  assert.equal(charCount(""), 0);
  assert.equal(charCount(null), 0);
  assert.equal(charCount("🦉é"), 2);
});
