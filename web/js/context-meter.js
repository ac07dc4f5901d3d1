// What the context meter by the message box says, from a `/context` answer (CONTRACT §6):
// the used / window label, its level (ok, near the summary threshold, over what the next
// request can carry), the sentence for each level and the split by part. Pure, so node can test it (tests/js/context-meter.test.mjs).

/** The parts of a request, in the order the split lists them. */
export const PARTS = [
  ["system", "System prompt"],
  ["summary", "Summary of earlier messages"],
  ["history", "Messages"],
  ["attachments", "Attachments"],
  ["tools", "Tools"],
];

const LEVELS = new Set(["ok", "near", "over"]);
// settings.compaction.threshold's default (CONTRACT §6), for an answer without `threshold`.
const THRESHOLD = 0.8;
const thresholdOf = (ctx) => (typeof ctx?.threshold === "number" ? ctx.threshold : THRESHOLD);
const count = (n) => Math.round(n).toLocaleString("en-US");
const num = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** A token count in a few characters: 950, 12.4k, 128k, 1.2M. */
export function formatTokens(n) {
  const v = Math.round(num(n));
  const short = (x, unit) => `${x < 100 ? String(Number(x.toFixed(1))) : String(Math.round(x))}${unit}`;
  if (v < 1000) return String(v);
  if (v < 999_500) return short(v / 1000, "k");
  return short(v / 1_000_000, "M");
}

/**
 * The level the server gave, else worked out the same way: "over" when the next request
 * passes what the window leaves after the output reserve, "near" at the summary threshold.
 */
export function contextLevel(ctx) {
  if (LEVELS.has(ctx?.level)) return ctx.level;
  const size = num(ctx?.context_window);
  const used = num(ctx?.used_tokens);
  const budget = typeof ctx?.input_budget === "number" ? ctx.input_budget : size - num(ctx?.max_output_tokens);
  if (size && used > budget) return "over";
  return size && used >= thresholdOf(ctx) * size ? "near" : "ok";
}

/**
 * Everything the meter shows, or null without an answer.
 * @param opts.auto whether older messages are summarized on their own (settings.compaction.auto)
 * @returns {{label, level, fraction, estimated, name, total, warning, rows: [{key, name, tokens, text}], notes: string[]}}
 */
export function meterView(ctx, { auto = true } = {}) {
  if (!ctx || typeof ctx !== "object") return null;
  const size = num(ctx.context_window);
  const used = num(ctx.used_tokens);
  const approx = ctx.estimated ? "≈" : "";
  const level = contextLevel(ctx);
  const percent = size ? Math.round((used / size) * 100) : 0;
  const past = `Past ${Math.round(thresholdOf(ctx) * 100)} % of the context window`;
  const parts = ctx.parts && typeof ctx.parts === "object" ? ctx.parts : {};
  const rows = PARTS.map(([key, name]) => {
    const tokens = num(parts[key]);
    return { key, name, tokens, text: `${approx}${count(tokens)}` };
  });
  const notes = [];
  if (ctx.estimated) notes.push("Counts are estimated: this model's own tokenizer is not available, so they may be off by a tenth or so.");
  if (ctx.window_known === false) notes.push(`The model's context window is not known: ${count(size)} tokens is assumed.`);
  const reserve = num(ctx.max_output_tokens);
  if (reserve) notes.push(`${count(reserve)} tokens are kept free for the reply.`);
  const omitted = num(ctx.messages_omitted);
  // With a summary, what the request leaves out is what the summary stands for.
  const verb = omitted === 1 ? "is" : "are";
  if (omitted && ctx.compaction) notes.push(`${plural(omitted, "earlier message")} ${verb} carried as a summary.`);
  else if (omitted) notes.push(`${plural(omitted, "earlier message")} ${verb} left out to fit the window.`);
  else if (ctx.compaction) notes.push("Earlier messages are carried as a summary.");
  let warning = "";
  const budget = typeof ctx.input_budget === "number" ? ctx.input_budget : size - reserve;
  if (level === "over" && ctx.trimmed_by === "window" && used <= budget) {
    // The request goes, without its oldest messages: the chat outgrew the window, the message did not.
    warning = "The whole chat no longer fits the model's context window, so the oldest messages are left out. "
      + "Summarize the chat to keep them, or start a new one.";
  } else if (level === "over") {
    warning = "The next message cannot fit in the model's context window. Summarize the chat or start a new one.";
  } else if (level === "near") {
    warning = auto ? `${past}: older messages will be summarized before the next reply.`
      : `${past}: the oldest messages will soon be left out. Summarize the chat to keep them.`;
  }
  const label = `${approx}${formatTokens(used)} / ${formatTokens(size)}`;
  const name = `Context: ${ctx.estimated ? "about " : ""}${count(used)} of ${count(size)} tokens (${percent} %)`;
  return { label, level, fraction: size ? Math.min(1, used / size) : 0, estimated: !!ctx.estimated, name,
           total: `${approx}${count(used)} of ${count(size)}`, warning, rows, notes };
}

/** Sentences joined into one accessible name, each ended by exactly one full stop. */
export function sentences(...parts) {
  return parts.map((p) => String(p || "").trim().replace(/[.\s]+$/, "")).filter(Boolean).map((p) => `${p}.`).join(" ");
}

export function plural(n, word) {
  return `${count(n)} ${word}${n === 1 ? "" : "s"}`;
}

/** What a turn says when older messages were left out of its request (`context_trimmed`). */
export function trimmedSentence(trimmed) {
  const n = num(trimmed?.messagesOmitted);
  const was = n === 1 ? "was" : "were";
  const first = `${plural(n, "earlier message")} ${was} left out to fit the model's context window.`;
  return trimmed?.notice ? `${first} ${trimmed.notice}` : first;
}

/** The toast after a summary: how much it saved. */
export function compactedSentence(c) {
  const before = num(c?.tokens_before ?? c?.tokensBefore);
  const after = num(c?.tokens_after ?? c?.tokensAfter);
  return `Earlier messages summarized: ${formatTokens(before)} → ${formatTokens(after)} tokens.`;
}
