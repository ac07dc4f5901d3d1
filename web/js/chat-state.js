// The shapes of the chat's client state that the fold's handlers share (web/js/reducer.js):
// messages and their tool calls, the running turn. Pure, no DOM: every function takes a
// state and returns it (the very same object when nothing changed) or a new one.

export const STREAMING = "streaming";

/**
 * The key of a feature's handler for a server restart (a new `epoch`): whatever the
 * old process was waiting for died with it. A symbol, so no server event type can be it.
 */
export const NEW_EPOCH = Symbol("new epoch");

export const isQueued = (m) => m.status === "queued";

export function turnRunning(state) {
  return !!state.turn && state.turn.status === "running";
}

export function newMessage(id, role, fields = {}) {
  return { id, role, content: "", reasoning: "", toolCalls: [], toolCallId: null, status: STREAMING,
           modelId: null, usage: null, error: null, ...fields };
}

export function toolCall(id, name, args, state) {
  return { id, name, arguments: args, state, ok: null, output: null, durationMs: null };
}

export function findMessage(state, id) {
  return id == null ? undefined : state.messages.find((m) => m.id === id);
}

export function findCallOwner(state, callId) {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m.toolCalls.some((c) => c.id === callId)) return m;
  }
  return undefined;
}

export function lastOnBranch(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (!isQueued(messages[i])) return messages[i];
  return undefined;
}

export function mapMessages(messages, fn) {
  let changed = false;
  const out = messages.map((m) => {
    const n = fn(m);
    if (n !== m) changed = true;
    return n;
  });
  return changed ? out : messages;
}

/** `fn` over the running turn's messages (and any still streaming). */
export function mapTurnMessages(state, fn) {
  const ids = new Set(state.turn ? state.turn.messageIds : []);
  const messages = mapMessages(state.messages, (m) => (ids.has(m.id) || m.status === STREAMING ? fn(m) : m));
  return messages === state.messages ? state : { ...state, messages };
}

export function updateMessage(state, id, fn) {
  const messages = mapMessages(state.messages, (m) => (m.id === id ? fn(m) : m));
  return messages === state.messages ? state : { ...state, messages };
}

/**
 * Put `message` in: over its row, else where it belongs — queued messages at the end,
 * others at the end of the branch. A queued row that joins the branch moves there.
 */
export function upsertMessage(state, message) {
  const i = state.messages.findIndex((m) => m.id === message.id);
  if (i >= 0 && !(isQueued(state.messages[i]) && !isQueued(message))) {
    const messages = state.messages.slice();
    messages[i] = message;
    return { ...state, messages };
  }
  const rest = i >= 0 ? state.messages.filter((m) => m.id !== message.id) : state.messages;
  if (isQueued(message)) return { ...state, messages: [...rest, message] };
  const at = rest.findIndex(isQueued);
  const messages = at < 0 ? [...rest, message] : [...rest.slice(0, at), message, ...rest.slice(at)];
  return { ...state, messages };
}

export function upsertToolCall(state, messageId, callId, fn) {
  return updateMessage(state, messageId, (m) => {
    const i = m.toolCalls.findIndex((c) => c.id === callId);
    const call = fn(i >= 0 ? m.toolCalls[i] : undefined);
    if (i >= 0 && call === m.toolCalls[i]) return m;
    const toolCalls = m.toolCalls.slice();
    if (i >= 0) toolCalls[i] = call;
    else toolCalls.push(call);
    return { ...m, toolCalls };
  });
}

/** `items` added to `list` where their number is new; `list` itself when none is. */
export function mergeSources(list, items) {
  const known = new Set(list.map((s) => s.n));
  const added = items.filter((s) => Number.isInteger(s.n) && !known.has(s.n) && known.add(s.n));
  return added.length ? [...list, ...added].sort((a, b) => a.n - b.n) : list;
}

/**
 * Make sure assistant message `id` exists and belongs to the running turn.
 *
 * The first event of a turn for a message starts its text over: the turn's
 * deltas add up to the whole message (a `continue` re-sends the saved text,
 * and a replay from the turn's start re-sends everything), so text that came
 * from history must not be appended to. A new message of the turn also means
 * the step before it was saved complete.
 */
export function touchMessage(state, id, turnId) {
  if (id == null) return state;
  const turn = state.turn;
  const ours = turn && turn.id === turnId && turnId != null;
  if (ours && turn.messageIds.includes(id)) return state;
  if (ours && !findMessage(state, id) && !turnOwnsLeaf(state)) return state;
  let next = state;
  // The turn's sources go with its newest reply: the final one saves them (CONTRACT §8).
  const sources = ours && turn.sources?.length ? { sources: turn.sources } : {};
  if (ours) {
    next = { ...next, turn: { ...turn, messageId: id, messageIds: [...turn.messageIds, id] } };
    next = updateMessage(next, turn.messageId, (m) => {
      if (m.id === id) return m;
      let left = m;
      if (sources.sources && "sources" in m) {
        left = { ...m };
        delete left.sources;
      }
      return left.status === STREAMING ? { ...left, status: "complete" } : left;
    });
  }
  const old = findMessage(next, id);
  if (!old) {
    return upsertMessage(next, newMessage(id, "assistant", { modelId: turn?.modelId ?? null, ...sources }));
  }
  if (!ours) return next;
  // Text it already had (history, or a reply being continued) is being sent again:
  // `replayed` tells the view this is not a reply it watched from its start.
  return updateMessage(next, id, (m) => ({ ...m, content: "", reasoning: "", status: STREAMING, error: null,
    replayed: m.replayed || m.status === "complete" || !!m.content || !!m.reasoning, ...sources }));
}

/**
 * Whether a new reply of the running turn goes at the end of the branch shown: the turn
 * wrote what ends it (its user message, a reply, a tool result of one, a message that
 * joined it). A reload replays the last turn even when its branch is not the active one
 * any more (switched since it ended): such a turn's replies are not the branch's.
 */
function turnOwnsLeaf(state) {
  const turn = state.turn;
  if (turn.elsewhere) return false;
  const leaf = lastOnBranch(state.messages);
  if (!leaf || leaf.id === turn.userMessageId || turn.messageIds.includes(leaf.id) || turn.joined?.includes(leaf.id)) {
    return true;
  }
  if (leaf.role === "tool") {
    const owner = findCallOwner(state, leaf.toolCallId);
    if (owner && turn.messageIds.includes(owner.id)) return true;
  }
  // A turn without a user message answers the branch as it stands (after tool results, a cut-off reply).
  return turn.userMessageId == null && !turn.messageIds.length && leaf.role !== "user";
}
