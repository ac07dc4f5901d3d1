// The context meter's words and levels (web/js/context-meter.js) from `/context` answers.
// Run: node --test tests/js/*.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";

import { compactedSentence, contextLevel, formatTokens, meterView, sentences, trimmedSentence } from "../../web/js/context-meter.js";

/** A /context answer (CONTRACT §6 and the extra keys the server adds). */
const answer = (fields = {}) => ({
  model_id: "m_1", context_window: 128_000, max_output_tokens: 4_000, used_tokens: 12_400, estimated: false,
  parts: { system: 400, summary: 0, history: 11_000, attachments: 500, tools: 500 },
  messages_included: 10, messages_omitted: 0, compaction: null,
  threshold: 0.8, input_budget: 124_000, level: "ok", window_known: true, ...fields,
});

test("token counts in a few characters", () => {
  assert.equal(formatTokens(0), "0");
  assert.equal(formatTokens(950), "950");
  assert.equal(formatTokens(999.6), "1k");
  assert.equal(formatTokens(1000), "1k");
  assert.equal(formatTokens(1234), "1.2k");
  assert.equal(formatTokens(12_400), "12.4k");
  assert.equal(formatTokens(99_960), "100k");
  assert.equal(formatTokens(128_000), "128k");
  assert.equal(formatTokens(131_072), "131k");
  assert.equal(formatTokens(1_000_000), "1M");
  assert.equal(formatTokens(2_000_000), "2M");
  assert.equal(formatTokens(1_250_000), "1.3M");
  assert.equal(formatTokens(-5), "0");
  assert.equal(formatTokens(undefined), "0");
});

test("used of the window, with ≈ when estimated, and a name that says it in words", () => {
  const exact = meterView(answer());
  assert.equal(exact.label, "12.4k / 128k");
  assert.equal(exact.level, "ok");
  assert.equal(exact.name, "Context: 12,400 of 128,000 tokens (10 %)");
  assert.equal(exact.warning, "");
  assert.equal(exact.total, "12,400 of 128,000");
  assert.ok(Math.abs(exact.fraction - 12_400 / 128_000) < 1e-9);
  const est = meterView(answer({ estimated: true }));
  assert.equal(est.label, "≈12.4k / 128k");
  assert.equal(est.name, "Context: about 12,400 of 128,000 tokens (10 %)");
  assert.match(est.notes.join(" "), /estimated/);
  assert.equal(est.total, "≈12,400 of 128,000");
  assert.ok(est.rows.every((r) => r.text.startsWith("≈")));
  assert.equal(meterView(null), null);
});

test("the split lists every part in order, zero or missing parts as 0", () => {
  const v = meterView(answer({ parts: { system: 1234, history: 5 } }));
  assert.deepEqual(v.rows.map((r) => [r.key, r.tokens, r.text]), [
    ["system", 1234, "1,234"], ["summary", 0, "0"], ["history", 5, "5"], ["attachments", 0, "0"], ["tools", 0, "0"]]);
  assert.deepEqual(v.rows.map((r) => r.name),
    ["System prompt", "Summary of earlier messages", "Messages", "Attachments", "Tools"]);
});

test("amber near the summary threshold, red when the next request cannot fit", () => {
  const near = meterView(answer({ used_tokens: 110_000, level: "near" }));
  assert.equal(near.level, "near");
  assert.match(near.warning, /^Past 80 % of the context window: older messages will be summarized/);
  assert.match(meterView(answer({ used_tokens: 110_000, level: "near" }), { auto: false }).warning,
    /oldest messages will soon be left out\. Summarize the chat/);
  const over = meterView(answer({ used_tokens: 125_000, level: "over" }));
  assert.equal(over.level, "over");
  assert.equal(over.warning, "The next message cannot fit in the model's context window. Summarize the chat or start a new one.");
  // The bar never runs past full.
  assert.equal(meterView(answer({ used_tokens: 500_000, level: "over" })).fraction, 1);
});

test("without the server's level, it is worked out from the threshold and the output reserve", () => {
  const base = { context_window: 1000, max_output_tokens: 100, threshold: 0.5 };
  assert.equal(contextLevel({ ...base, used_tokens: 499 }), "ok");
  assert.equal(contextLevel({ ...base, used_tokens: 500 }), "near");
  assert.equal(contextLevel({ ...base, used_tokens: 900 }), "near");
  assert.equal(contextLevel({ ...base, used_tokens: 901 }), "over");
  assert.equal(contextLevel({ ...base, used_tokens: 901, input_budget: 950 }), "near");
  // The default threshold (0.8) when the answer has none; a level the server gave wins.
  assert.equal(contextLevel({ context_window: 1000, used_tokens: 800 }), "near");
  assert.equal(contextLevel({ context_window: 1000, used_tokens: 800, level: "ok" }), "ok");
  assert.equal(contextLevel({ context_window: 1000, used_tokens: 800, level: "bogus" }), "near");
});

test("notes: an assumed window, the reply's reserve, messages left out, a summary carried", () => {
  const v = meterView(answer({ window_known: false, context_window: 8192, messages_omitted: 3,
                               compaction: { boundary_message_id: 4, summary: "s" } }));
  const notes = v.notes.join("\n");
  assert.match(notes, /not known: 8,192 tokens is assumed/);
  assert.match(notes, /4,000 tokens are kept free for the reply/);
  // With a summary, the messages the request does not carry are the ones it summarizes.
  assert.match(notes, /3 earlier messages are carried as a summary/);
  assert.doesNotMatch(notes, /left out/);
  assert.match(meterView(answer({ messages_omitted: 1 })).notes.join(), /1 earlier message is left out/);
  assert.match(meterView(answer({ compaction: { boundary_message_id: 4, summary: "s" } })).notes.join(),
               /Earlier messages are carried as a summary/);
});

test("what a trimmed turn and a summary say", () => {
  assert.equal(trimmedSentence({ messagesOmitted: 4 }), "4 earlier messages were left out to fit the model's context window.");
  assert.equal(trimmedSentence({ messagesOmitted: 1, notice: "The summary could not be made: timeout." }),
    "1 earlier message was left out to fit the model's context window. The summary could not be made: timeout.");
  assert.equal(compactedSentence({ tokens_before: 120_000, tokens_after: 2_100 }),
    "Earlier messages summarized: 120k → 2.1k tokens.");
});

test("a chat that outgrew the window says its oldest messages are left out, not that the next cannot fit", () => {
  const trimmed = meterView(answer({ used_tokens: 120_000, level: "over", trimmed_by: "window", messages_omitted: 40 }));
  assert.equal(trimmed.level, "over");
  assert.match(trimmed.warning, /^The whole chat no longer fits the model's context window, so the oldest messages are left out\./);
  assert.doesNotMatch(trimmed.warning, /cannot fit/);
  assert.ok(trimmed.notes.includes("40 earlier messages are left out to fit the window."));
  // A draft past the budget still cannot fit, whatever was trimmed.
  const past = meterView(answer({ used_tokens: 125_000, level: "over", trimmed_by: "window" }));
  assert.match(past.warning, /^The next message cannot fit/);
});

test("an accessible name of several sentences ends each with one full stop", () => {
  assert.equal(sentences("Context: 12 of 128 tokens (9 %)", "Summarize the chat or start a new one.", "Show what it is made of"),
    "Context: 12 of 128 tokens (9 %). Summarize the chat or start a new one. Show what it is made of.");
  assert.equal(sentences("A", "", "B."), "A. B.");
});
