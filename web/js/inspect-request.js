// The inspector's reading of `GET /api/chats/{id}/inspect` (CONTRACT §6): the request the
// next turn would send, as the wire API shapes it — Chat Completions (`messages`, the
// system prompt the first of them), Responses (`instructions`, `input` items) or Anthropic
// Messages (`system`, `messages` of blocks) — split into the system text, each message
// with its token count, the tools offered and the other parameters. Pure, so node can test
// it (tests/js/inspect-request.test.mjs); the view shows every string as text.

export const WIRE_NAMES = {
  chat_completions: "Chat Completions",
  responses: "Responses",
  anthropic_messages: "Anthropic Messages",
};

// Body keys shown in their own sections; every other key is a parameter.
const SECTIONS = new Set(["messages", "input", "system", "instructions", "tools"]);

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const json = (v) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * @returns {{wireApi, wireName, model, url, system: {text, tokens}|null,
 *   messages: [{role, text, tokens}], tools: [{name, description}], toolsTokens, params: [[key, text]], total}}
 */
export function readRequest(answer) {
  const body = isObject(answer?.body) ? answer.body : {};
  const tokens = isObject(answer?.tokens) ? answer.tokens : {};
  const counts = Array.isArray(tokens.messages) ? tokens.messages : [];
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  const systemTexts = [];
  if (body.instructions != null) systemTexts.push(json(body.instructions));
  if (body.system != null) systemTexts.push(Array.isArray(body.system) ? body.system.map(partText).join("\n\n") : json(body.system));
  const messages = [];
  list.forEach((m, i) => {
    const tokensOf = typeof counts[i] === "number" ? counts[i] : null;
    // Chat Completions carries the system prompt as its first message(s).
    if (isObject(m) && (m.role === "system" || m.role === "developer") && Array.isArray(body.messages)) {
      systemTexts.push(contentText(m.content));
      return;
    }
    messages.push({ role: roleOf(m), text: messageText(m), tokens: tokensOf });
  });
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((t) => ({
    name: String(t?.name ?? t?.function?.name ?? t?.type ?? "tool"),
    description: String(t?.description ?? t?.function?.description ?? ""),
  }));
  const params = Object.keys(body).filter((k) => !SECTIONS.has(k)).map((k) => [k, json(body[k])]);
  return {
    wireApi: String(answer?.wire_api ?? ""), wireName: WIRE_NAMES[answer?.wire_api] || String(answer?.wire_api ?? ""),
    model: String(answer?.model ?? body.model ?? ""), url: String(answer?.url ?? ""),
    system: systemTexts.length ? { text: systemTexts.join("\n\n"), tokens: num(tokens.system) } : null,
    messages, tools, toolsTokens: num(tokens.tools), params, total: num(tokens.total),
  };
}

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function roleOf(m) {
  if (!isObject(m)) return "message";
  if (m.role) return String(m.role);
  if (m.type === "function_call") return "assistant";
  if (m.type === "function_call_output") return "tool";
  return String(m.type ?? "message");
}

/** A message or Responses item as lines of text: its content, then its tool calls. */
function messageText(m) {
  if (!isObject(m)) return json(m);
  const lines = [];
  if (m.type === "function_call") return `→ ${m.name}(${m.arguments ?? ""})`;
  if (m.type === "function_call_output") return json(m.output ?? "");
  if (m.type === "reasoning") return `(reasoning${m.encrypted_content ? ", encrypted" : ""}) ${(m.summary || []).map(partText).join(" ")}`.trim();
  if (m.content != null) lines.push(contentText(m.content));
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    lines.push(`→ ${c?.function?.name ?? c?.name ?? "tool"}(${c?.function?.arguments ?? c?.arguments ?? ""})`);
  }
  return lines.filter((l) => l !== "").join("\n");
}

function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(partText).filter((t) => t !== "").join("\n");
  return content == null ? "" : json(content);
}

/** One content part or block, whatever the wire API calls it. */
function partText(p) {
  if (typeof p === "string") return p;
  if (!isObject(p)) return json(p);
  switch (p.type) {
    case "text": case "input_text": case "output_text": case "summary_text": return String(p.text ?? "");
    // Image bytes come replaced by "[image/png, N bytes, sha256 …]" (the server's doing).
    case "image_url": return String(p.image_url?.url ?? p.image_url ?? "");
    case "input_image": return String(p.image_url ?? p.file_id ?? "");
    case "image": case "document": return String(p.source?.data ?? p.source?.url ?? json(p.source ?? ""));
    case "tool_use": return `→ ${p.name}(${JSON.stringify(p.input ?? {})})`;
    case "tool_result": return `← ${contentText(p.content)}`;
    case "thinking": return `(thinking) ${p.thinking ?? ""}`;
    case "redacted_thinking": return "(thinking, redacted)";
    default: return json(p);
  }
}
