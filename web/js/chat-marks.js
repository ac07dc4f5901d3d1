// What the chat header says about a chat besides its title: the settings that change its
// replies (a system prompt, parameters set) and what its replies have used so far. Pure,
// so node can test it (tests/js/chat-marks.test.mjs).

const PARAM_NAMES = { temperature: "temperature", top_p: "top p", max_tokens: "max tokens", reasoning_effort: "reasoning" };

/**
 * The chat's own settings that differ from the defaults, in words, or [] when none:
 * ["System prompt", "temperature 0.2"]. A param that is null or absent is the default.
 */
export function activeSettings(chat) {
  const out = [];
  if (typeof chat?.system_prompt === "string" && chat.system_prompt.trim()) out.push("System prompt");
  const params = chat?.params && typeof chat.params === "object" ? chat.params : {};
  for (const [key, name] of Object.entries(PARAM_NAMES)) {
    const v = params[key];
    if (v === null || v === undefined) continue;
    out.push(`${name} ${typeof v === "number" ? v.toLocaleString("en-US") : v}`);
  }
  return out;
}

/** "$0.42", "$0.0031", "<$0.0001": enough digits that a small chat's cost is not shown as $0.00. */
export function formatCost(dollars) {
  if (dollars === 0) return "$0.00";
  if (dollars < 0.0001) return "<$0.0001";
  if (dollars < 0.01) return `$${dollars.toFixed(4)}`;
  if (dollars < 1) return `$${dollars.toFixed(3)}`;
  return `$${dollars.toFixed(2)}`;
}

/**
 * The chat's running total (GET /api/chats/{id}/usage) in words, or "" before any reply
 * was counted: "1,234 tokens in this chat · $0.0031", the cost only when the model has prices.
 * @returns {{text: string, title: string}}
 */
export function usageSummary(usage) {
  if (!usage || !usage.replies) return { text: "", title: "" };
  const input = usage.input_tokens || 0;
  const output = usage.output_tokens || 0;
  // Replies stopped before the provider counted anything carry zeros: "0 tokens" would be false.
  if (!input && !output) return { text: "", title: "" };
  const approx = usage.estimated ? "≈" : "";
  // Says what it counts: every reply of this chat, what was sent and what came back.
  const tokens = `${approx}${(input + output).toLocaleString("en-US")} tokens in this chat`;
  const cost = typeof usage.cost === "number" ? formatCost(usage.cost) : "";
  const text = cost ? `${tokens} · ${cost}` : tokens;
  const replies = usage.replies === 1 ? "1 reply" : `${usage.replies} replies`;
  const title = `This chat so far, every reply added up: ${input.toLocaleString("en-US")} tokens in (each request`
    + ` sends the conversation again), ${output.toLocaleString("en-US")} out`
    + ` over ${replies}${cost ? `, ${cost}` : ", no price known for its model"}${usage.estimated ? " (partly estimated)" : ""}.`;
  return { text, title };
}
