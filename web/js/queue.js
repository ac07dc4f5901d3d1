// The queue of messages waiting for the chat (CONTRACT §7 `queue`) and steering: a queued
// message that joins the running turn at its next step (`steered`). Registered into the
// fold by web/js/reducer.js.

import { findMessage, isQueued, upsertMessage, newMessage, turnRunning } from "./chat-state.js";

// The state's slices: the queue as the server lists it, and the queued messages that left
// it in its last change (kept for a `steered` that follows, which moves one of them into
// the running turn).
export const queueSlices = { queue: [], unqueued: [] };

export const queueEvents = {
  queue: (state, e) => setQueue(state, e.items || []),

  /**
   * A steering message joined the running turn: the queued row (`queued_id`, the same
   * id as `message_id`) moves to the end of the branch, after the step's tool results,
   * and the next step's reply follows it. The queue event that took it off usually
   * comes first. A row already on the branch (a replay over history) stays where it is.
   */
  steered(state, e) {
    const old = findMessage(state, e.queued_id) ?? state.unqueued.find((m) => m.id === e.queued_id);
    let next = {
      ...state,
      queue: state.queue.some((q) => q.message_id === e.queued_id)
        ? state.queue.filter((q) => q.message_id !== e.queued_id) : state.queue,
      unqueued: state.unqueued.some((m) => m.id === e.queued_id)
        ? state.unqueued.filter((m) => m.id !== e.queued_id) : state.unqueued,
    };
    if (state.turn && !state.turn.joined?.includes(e.message_id)) {
      next.turn = { ...state.turn, joined: [...(state.turn.joined || []), e.message_id] };
    }
    const known = findMessage(next, e.message_id);
    if (known && !isQueued(known)) return next;
    if (e.queued_id !== e.message_id) next = { ...next, messages: next.messages.filter((m) => m.id !== e.queued_id) };
    return upsertMessage(next, newMessage(e.message_id, "user", {
      ...(known || {}),
      content: e.content ?? old?.content ?? "",
      attachments: old?.attachments ?? [],
      status: "complete",
      requestId: old?.requestId ?? null,
      placeholder: false,
    }));
  },
};

/**
 * Replace the queue. A queued user message that left it was discarded — except,
 * between turns, the oldest one: it is the message whose turn starts next.
 */
export function setQueue(state, items) {
  // A replayed queue may still list a message history shows on the branch (started or steered).
  const started = new Set(state.messages.filter((m) => !isQueued(m)).map((m) => m.id));
  const queue = items.filter((i) => !started.has(i.message_id))
    .map((i) => ({ message_id: i.message_id, preview: i.preview, steer: !!i.steer }));
  const listed = new Set(queue.map((q) => q.message_id));
  const gone = state.messages.filter((m) => m.role === "user" && m.status === "queued" && !listed.has(m.id));
  const starting = !turnRunning(state) && gone.length ? gone[0].id : undefined;
  const drop = new Set(gone.map((m) => m.id).filter((id) => id !== starting));
  if (!drop.size) return { ...state, queue };
  // A steering message leaves the queue just before its `steered`: keep what it was
  // (request id, files) until then. Only the last change's are kept.
  return { ...state, queue, messages: state.messages.filter((m) => !drop.has(m.id)),
           unqueued: gone.filter((m) => drop.has(m.id)) };
}
