// Where the thread shows what the context did (CONTRACT §6): the "Earlier messages
// summarized" divider after a checkpoint's boundary message, and the note of a turn whose
// request left older messages out, between its message and its reply; and the state they
// are drawn from: the events `compacted` and `context_trimmed` (`contextEvents`, registered
// into the fold by web/js/reducer.js) and a /context read's checkpoint (loadCompaction).
// Pure, so node can test it (tests/js/context-marks.test.mjs); the chat view draws the marks.

/**
 * The marks to draw, each after a message that has a bubble: [{afterId, kind}] with kind
 * "summary" or "trimmed", in thread order.
 * @param order the messages in the order shown
 * @param drawn whether a message has a bubble of its own (a tool result shows in its call)
 * @param state the reducer's state: `compaction`, `trimmed`, `turn`
 */
export function contextMarks(order, drawn, state) {
  const marks = [];
  const at = (i) => {
    for (; i >= 0; i--) if (drawn(order[i])) return order[i].id;
    return null;
  };
  const index = (id) => (id == null ? -1 : order.findIndex((m) => m.id === id));
  const c = state.compaction;
  // Only when the boundary itself is loaded: above the page, the divider would be a guess.
  const boundary = index(c?.boundaryMessageId);
  if (boundary >= 0) {
    const afterId = at(boundary);
    if (afterId != null) marks.push({ afterId, kind: "summary", at: boundary });
  }
  const t = state.trimmed;
  const turn = state.turn;
  if (t && (!turn || t.turnId == null || turn.id === t.turnId)) {
    let i = index(t.userMessageId);
    if (i < 0 && turn?.messageIds?.length) i = index(turn.messageIds[0]) - 1;
    if (i < 0 && !turn?.messageIds?.length) i = lastSent(order);
    const afterId = i >= 0 ? at(i) : null;
    if (afterId != null) marks.push({ afterId, kind: "trimmed", at: i });
  }
  return marks.sort((a, b) => a.at - b.at).map(({ afterId, kind }) => ({ afterId, kind }));
}

function lastSent(order) {
  for (let i = order.length - 1; i >= 0; i--) if (order[i].status !== "queued") return i;
  return -1;
}

// --- the state the marks are drawn from ------------------------------------------------

// The state's slices: the branch's summary checkpoint (CONTRACT §6): {boundaryMessageId,
// summary, tokensBefore, tokensAfter, createdAt}, `summary` null until a /context read brings
// it (loadCompaction); and older messages left out of the running (or last) turn's request
// (`context_trimmed`): {turnId, userMessageId, messagesOmitted, tokensBefore, tokensAfter, notice}.
export const contextSlices = { compaction: null, trimmed: null };

/**
 * The checkpoint a `/context` read names (`compaction`, null when the branch has none): the
 * divider goes after its boundary message and opens its summary.
 */
export function loadCompaction(state, c) {
  const next = c && typeof c === "object" ? {
    boundaryMessageId: c.boundary_message_id ?? null, summary: typeof c.summary === "string" ? c.summary : "",
    tokensBefore: c.tokens_before ?? null, tokensAfter: c.tokens_after ?? null, createdAt: c.created_at ?? null,
  } : null;
  const old = state.compaction;
  if (old === next || (old && next && Object.keys(next).every((k) => old[k] === next[k]))) return state;
  return { ...state, compaction: next };
}

export const contextEvents = {
  /**
   * The turn summarized older messages before its first request: the divider goes after
   * the boundary at once; the summary's text comes with the next /context read.
   */
  compacted(state, e) {
    const old = state.compaction;
    const same = old?.boundaryMessageId === e.boundary_message_id;
    if (same && old.tokensBefore === e.tokens_before && old.tokensAfter === e.tokens_after) return state;
    return { ...state, compaction: { boundaryMessageId: e.boundary_message_id, summary: same ? old.summary : null,
                                     tokensBefore: e.tokens_before, tokensAfter: e.tokens_after,
                                     createdAt: same ? old.createdAt : null } };
  },

  /** Older messages were left out of a request of the turn (no summary): the turn says how many. */
  context_trimmed(state, e) {
    const turn = state.turn && state.turn.id === e.turn_id ? state.turn : null;
    return { ...state, trimmed: { turnId: e.turn_id ?? null, userMessageId: turn?.userMessageId ?? null,
                                  messagesOmitted: e.messages_omitted ?? 0, tokensBefore: e.tokens_before ?? null,
                                  tokensAfter: e.tokens_after ?? null, notice: e.notice || null } };
  },

  // What a new turn leaves out is its own to say.
  turn_start: (state) => (state.trimmed ? { ...state, trimmed: null } : state),
};
