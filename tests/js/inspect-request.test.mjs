// The inspector's reading of each wire API's request body (web/js/inspect-request.js).
// Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { readRequest } from "../../web/js/inspect-request.js";

const IMAGE = "[image/png, 12345 bytes, sha256 ab12cd34]";

test("Chat Completions: the system message is the system text; tool calls and results are messages", () => {
  const r = readRequest({
    wire_api: "chat_completions", model: "gpt-x", url: "https://api.example.com/v1/chat/completions",
    body: {
      model: "gpt-x", stream: true, temperature: 0.2, stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: IMAGE } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "web_fetch", arguments: "{\"url\":\"x\"}" } }] },
        { role: "tool", tool_call_id: "c1", content: "page text" },
      ],
      tools: [{ type: "function", function: { name: "web_fetch", description: "Fetch a page.", parameters: {} } }],
    },
    tokens: { system: 4, tools: 30, messages: [4, 1500, 12, 3], total: 1549 },
  });
  assert.equal(r.wireName, "Chat Completions");
  assert.equal(r.model, "gpt-x");
  assert.equal(r.url, "https://api.example.com/v1/chat/completions");
  assert.deepEqual(r.system, { text: "Be brief.", tokens: 4 });
  assert.deepEqual(r.messages, [
    { role: "user", text: `What is this?\n${IMAGE}`, tokens: 1500 },
    { role: "assistant", text: "→ web_fetch({\"url\":\"x\"})", tokens: 12 },
    { role: "tool", text: "page text", tokens: 3 },
  ]);
  assert.deepEqual(r.tools, [{ name: "web_fetch", description: "Fetch a page." }]);
  assert.equal(r.toolsTokens, 30);
  assert.deepEqual(r.params, [["model", "gpt-x"], ["stream", "true"], ["temperature", "0.2"],
                              ["stream_options", "{\"include_usage\":true}"]]);
  assert.equal(r.total, 1549);
});

test("Responses: instructions and input items", () => {
  const r = readRequest({
    wire_api: "responses", model: "o-x", url: "https://api.example.com/v1/responses",
    body: {
      model: "o-x", instructions: "Think first.", store: false,
      input: [
        { role: "user", content: [{ type: "input_text", text: "Hi" }, { type: "input_image", image_url: IMAGE, detail: "auto" }] },
        { type: "reasoning", id: "r1", summary: [{ type: "summary_text", text: "pondered" }], encrypted_content: "[secret]" },
        { type: "function_call", call_id: "c1", name: "shell", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "ok" },
        { role: "assistant", content: "Done." },
      ],
      tools: [{ type: "function", name: "shell", description: "Run a command.", parameters: {}, strict: false }],
    },
    tokens: { system: 3, tools: 20, messages: [90, 5, 6, 1, 2], total: 127 },
  });
  assert.equal(r.wireName, "Responses");
  assert.deepEqual(r.system, { text: "Think first.", tokens: 3 });
  assert.deepEqual(r.messages.map((m) => [m.role, m.text, m.tokens]), [
    ["user", `Hi\n${IMAGE}`, 90], ["reasoning", "(reasoning, encrypted) pondered", 5],
    ["assistant", "→ shell({})", 6], ["tool", "ok", 1], ["assistant", "Done.", 2]]);
  assert.deepEqual(r.tools, [{ name: "shell", description: "Run a command." }]);
  assert.deepEqual(r.params, [["model", "o-x"], ["store", "false"]]);
});

test("Anthropic Messages: system text, blocks of text, images, thinking, tool use and results", () => {
  const r = readRequest({
    wire_api: "anthropic_messages", model: "claude-x", url: "https://api.anthropic.com/v1/messages",
    body: {
      model: "claude-x", max_tokens: 4096, stream: true, system: "You are kind.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: IMAGE } }] },
        { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "tool_use", id: "t1", name: "read_file", input: { path: "a" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "file text" }] },
        { role: "assistant", content: "Plain." },
      ],
      tools: [{ name: "read_file", description: "Read a file.", input_schema: {} }],
    },
    tokens: { system: 5, tools: 25, messages: [1600, 20, 4, 2], total: 1656 },
  });
  assert.equal(r.wireName, "Anthropic Messages");
  assert.deepEqual(r.system, { text: "You are kind.", tokens: 5 });
  assert.deepEqual(r.messages.map((m) => m.text), [`Look\n${IMAGE}`, "(thinking) hmm\n→ read_file({\"path\":\"a\"})", "← file text", "Plain."]);
  assert.deepEqual(r.params, [["model", "claude-x"], ["max_tokens", "4096"], ["stream", "true"]]);
  // A system prompt as blocks reads as its text.
  assert.equal(readRequest({ body: { system: [{ type: "text", text: "A" }, { type: "text", text: "B" }], messages: [] } }).system.text, "A\n\nB");
});

test("a missing or odd answer gives empty sections, never a throw", () => {
  const r = readRequest(null);
  assert.deepEqual([r.system, r.messages, r.tools, r.params, r.total], [null, [], [], [], null]);
  const odd = readRequest({ wire_api: "future_api", body: { messages: [null, 5, { role: "user", content: { x: 1 } }, { type: "new_part" }] },
                            tokens: { messages: ["x"] } });
  assert.equal(odd.wireName, "future_api");
  assert.deepEqual(odd.messages.map((m) => [m.role, m.text, m.tokens]),
    [["message", "null", null], ["message", "5", null], ["user", "{\"x\":1}", null], ["new_part", "", null]]);
  // Markup stays as text for the view to show as text.
  assert.equal(readRequest({ body: { messages: [{ role: "user", content: "<img src=x onerror=alert(1)>" }] } }).messages[0].text,
    "<img src=x onerror=alert(1)>");
});
