// Where the thread shows what the context did (CONTRACT §6): the "Earlier messages
// summarized" divider after a checkpoint's boundary message, and the note of a turn whose
// request left older messages out, between its message and its reply. Pure, so node can
// test it (tests/js/context-marks.test.mjs); the chat view draws the marks.

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
