// The chat header's marks (web/js/chat-marks.js): settings in effect, tokens and cost.
// Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { activeSettings, formatCost, usageSummary } from "../../web/js/chat-marks.js";

test("a system prompt and each param set are named; defaults and blanks are not", () => {
  assert.deepEqual(activeSettings({ system_prompt: "", params: {} }), []);
  assert.deepEqual(activeSettings({ system_prompt: "  \n", params: { temperature: null } }), []);
  assert.deepEqual(activeSettings({}), []);
  assert.deepEqual(activeSettings({ system_prompt: "Be brief.", params: { temperature: 0.2 } }),
    ["System prompt", "temperature 0.2"]);
  assert.deepEqual(activeSettings({ params: { max_tokens: 4000, top_p: 0.9, reasoning_effort: "high", temperature: 0 } }),
    ["temperature 0", "top p 0.9", "max tokens 4,000", "reasoning high"]);
});

test("tokens always, cost only when known", () => {
  assert.deepEqual(usageSummary(null), { text: "", title: "" });
  assert.equal(usageSummary({ replies: 0, input_tokens: 0, output_tokens: 0, cost: null }).text, "");
  const noPrice = usageSummary({ replies: 2, input_tokens: 1200, output_tokens: 34, cost: null, estimated: false });
  assert.equal(noPrice.text, "1,234 tokens in this chat");
  assert.match(noPrice.title, /every reply added up: 1,200 tokens in \(each request sends the conversation again\), 34 out over 2 replies, no price known/);
  const priced = usageSummary({ replies: 1, input_tokens: 10, output_tokens: 5, cost: 0.0031, estimated: true });
  assert.equal(priced.text, "≈15 tokens in this chat · $0.0031");
  assert.match(priced.title, /over 1 reply, \$0\.0031 \(partly estimated\)/);
});

test("replies with no token count (stopped before any was given) show no total", () => {
  assert.equal(usageSummary({ replies: 1, input_tokens: 0, output_tokens: 0, cost: null }).text, "");
  assert.equal(usageSummary({ replies: 2, input_tokens: 0, output_tokens: 0, cost: 0 }).text, "");
});

test("small costs keep their digits", () => {
  assert.equal(formatCost(0), "$0.00");
  assert.equal(formatCost(0.00001), "<$0.0001");
  assert.equal(formatCost(0.0042), "$0.0042");
  assert.equal(formatCost(0.123), "$0.123");
  assert.equal(formatCost(12.345), "$12.35");
});
