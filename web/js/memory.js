// Memory in the page (CONTRACT §8): the "Memory saved · Undo" chips a turn's `memory_saved`
// events leave (`memoryEvents`, registered into the fold by web/js/reducer.js), where each goes
// (under its turn's last reply), what its Undo does, and the small rules of Settings → Memory and
// of the chat's and folder's "Use memory". Pure, no DOM (node-tested); the chip is
// views/memory-chip.js and the page views/memory-settings.js.
//
// A memory's text was written by a model: it is only ever handled here as a string.

export const TEXT_MAX = 500;
// Chips kept per chat: a long session saving many facts keeps the newest.
const KEPT = 50;

// The state's slice: [{turnId, userMessageId, messageId, memoryId, text, updated, previousText}],
// oldest first.
export const memorySlices = { memorySaved: [] };

export const memoryEvents = {
  /**
   * A `remember` of the turn saved (or updated) a memory: a chip for it under the turn's reply.
   * The reply is named by the turn's user message and the reply being written when it came,
   * whichever the page still has (chipsByReply). The same memory saved again in a turn keeps
   * one chip: added in the turn, it stays "saved" (Undo deletes it); else the text it had
   * before the turn is the one Undo puts back.
   */
  memory_saved(state, e) {
    if (typeof e.memory_id !== "string" || !e.memory_id) return state;
    const ours = state.turn && state.turn.id === e.turn_id ? state.turn : null;
    const old = state.memorySaved.find((c) => c.turnId === e.turn_id && c.memoryId === e.memory_id);
    const chip = {
      turnId: e.turn_id ?? null,
      userMessageId: ours?.userMessageId ?? old?.userMessageId ?? null,
      messageId: ours?.messageId ?? old?.messageId ?? null,
      memoryId: e.memory_id,
      text: typeof e.text === "string" ? e.text : "",
      updated: old ? old.updated : !!e.updated,
      previousText: old ? old.previousText : typeof e.previous_text === "string" ? e.previous_text : null,
    };
    const rest = state.memorySaved.filter((c) => c !== old);
    return { ...state, memorySaved: [...rest, chip].slice(-KEPT) };
  },
};

/**
 * The chips by the reply each goes under: Map(assistant message id → [chip]). A chip's turn is
 * found from the reply it came during, else its user message; it goes under the last assistant
 * message from there up to the next user message (a turn's tool steps and its answer read as
 * one reply). A chip whose turn is not shown (another branch, a page not loaded) is left out.
 */
export function chipsByReply(messages, chips) {
  const out = new Map();
  if (!chips?.length || !messages?.length) return out;
  const at = new Map(messages.map((m, i) => [m.id, i]));
  for (const chip of chips) {
    let i = at.get(chip.messageId);
    if (i === undefined) i = at.get(chip.userMessageId);
    if (i === undefined) continue;
    let reply = null;
    for (let j = i; j < messages.length; j++) {
      const m = messages[j];
      if (m.role === "user" && j > i) break;
      if (m.role === "assistant") reply = m.id;
    }
    if (reply === null) continue;
    out.set(reply, [...(out.get(reply) || []), chip]);
  }
  return out;
}

/** What the chip says: "Memory saved" or "Memory updated". */
export function chipLabel(chip) {
  return chip.updated ? "Memory updated" : "Memory saved";
}

/**
 * What the chip's Undo does: {method: "DELETE", path} for a memory the turn added, {method:
 * "PATCH", path, body: {text}} to put back the text an updated memory had, or null when that
 * text is not known (then the chip offers to open Settings → Memory instead).
 */
export function undoPlan(chip) {
  const path = `/api/memories/${encodeURIComponent(chip.memoryId)}`;
  if (!chip.updated) return { method: "DELETE", path };
  if (typeof chip.previousText === "string" && chip.previousText.trim()) {
    return { method: "PATCH", path, body: { text: chip.previousText } };
  }
  return null;
}

/** The sentence a chip shows once its Undo ran (`outcome`: "removed" | "restored" | "gone"). */
export function undoneSentence(outcome) {
  return { removed: "Memory removed.", restored: "Memory put back as it was.",
           gone: "That memory was already deleted." }[outcome] || "";
}

/** Why a memory's text cannot be saved as typed, or "" when it can (the server says the same, 422). */
export function textProblem(text) {
  const t = String(text ?? "").trim();
  if (!t) return "Write the fact to remember; an empty memory cannot be saved.";
  if (t.length > TEXT_MAX) return `A memory holds at most ${TEXT_MAX} characters (this has ${t.length.toLocaleString("en")}); keep one short fact.`;
  return "";
}

/** GET path of the memories, searched for `q` when it has words. */
export function listPath(q) {
  const t = String(q ?? "").trim();
  return t ? `/api/memories?q=${encodeURIComponent(t)}` : "/api/memories";
}

/** The address of a chat in the app (web/app/router.js chatPath, as a link's href). */
export function chatHref(chatId) {
  return `#/c/${encodeURIComponent(chatId)}`;
}

/**
 * A memory's source chat as the page says it: {kind: "none"} (added by hand, or its chat purged:
 * the server then forgets the id), {kind: "chat", href, title} or {kind: "deleted"}. `chat` is what
 * GET /api/chats/{id} gave: an object, null for a 404, undefined while not read yet.
 */
export function sourceChat(memory, chat) {
  if (!memory.source_chat_id) return { kind: "none" };
  if (chat === null) return { kind: "deleted" };
  const title = chat && typeof chat.title === "string" && chat.title.trim() ? chat.title.trim() : "a chat";
  return { kind: "chat", href: chatHref(memory.source_chat_id), title };
}

/** A chat's `memory` as its three-way choice: "folder" (null: as its folder says), "on", "off". */
export function memoryChoice(value) {
  return value === true ? "on" : value === false ? "off" : "folder";
}

/** The `memory` to save for a choice of memoryChoice. */
export function memoryValue(choice) {
  return choice === "on" ? true : choice === "off" ? false : null;
}

/** What "follow the folder" means for a chat right now, in words. */
export function followsSentence(folder, enabled = true) {
  if (!enabled) return "Memory is off in Settings → Memory for every chat.";
  if (!folder) return "Not in a folder: memory is on.";
  return folder.memory === false ? `Folder “${folder.name}” has memory off.` : `Folder “${folder.name}” has memory on.`;
}

/** Whether a reply's source (as saved or as the `sources` event gives it) is a memory. */
export function isMemorySource(source) {
  return !!source && (source.kind === "memory" || typeof source.memory_id === "string") && typeof source.memory_id === "string"
    && source.memory_id !== "";
}

export const EMPTY_SENTENCE = "No memories yet. When you tell a chat something about yourself and ask it to remember, "
  + "the model saves it with its remember tool (asking you first), and it shows up here. You can edit or delete each one.";
