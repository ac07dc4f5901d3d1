// The turn's own events: the messages the person sends (an optimistic copy until the
// server's `accepted`), a turn's start and end, the text its replies stream, their saving,
// errors, usage, a fallback model, the title, and the snapshot a resume starts from.
// Registered into the fold by web/js/reducer.js; each handler takes the state already
// positioned at its event.
//
// A `content` / `reasoning` event either appends its delta to that field of a message the
// turn is writing and changes nothing else, or (the first event of the turn for that
// message) starts the message over, its text then the delta alone. The chat view relies
// on this: a delta that continues the text a bubble drew is drawn there and nothing else
// (web/app/chat-session.js watchText); tests/js/text-deltas.test.mjs holds the rule.

import { STREAMING, NEW_EPOCH, findMessage, upsertMessage, updateMessage, mapMessages, mapTurnMessages,
  touchMessage, newMessage, toolCall, mergeSources, isQueued, turnRunning } from "./chat-state.js";
import { setQueue } from "./queue.js";

// turn_end status → the status a message still streaming ends with.
const END_STATUS = { completed: "complete", cancelled: "cancelled", failed: "error", limit: "error" };

// A message status in a snapshot → the turn status it implies.
const TURN_STATUS = { complete: "completed", cancelled: "cancelled", error: "failed", limit: "limit",
                      interrupted: "failed" };

/** An optimistic user message, shown until the server's `accepted` names its row. */
export function localSend(state, requestId, content, attachments, { research = false } = {}) {
  if (state.pending.some((p) => p.requestId === requestId)) return state;
  const pending = attachments?.length ? { requestId, content, attachments } : { requestId, content };
  if (research) pending.research = true;
  return { ...state, pending: [...state.pending, pending] };
}

// The slices of the state these events keep: the branch's messages (web/js/history-page.js
// merges pages into it), sends not yet accepted, the turn followed, the chat's title, the
// notice (an error, a fallback) and the last usage report.
export const turnSlices = { messages: [], pending: [], turn: null, title: null, notice: null, usage: null };

export const turnEvents = {
  accepted(state, e) {
    const pending = state.pending.find((p) => p.requestId === e.request_id);
    const status = e.queued ? "queued" : "complete";
    const old = findMessage(state, e.message_id);
    // A message that joined the branch never goes back to waiting (an `accepted` replayed
    // after a reload, history holding it started or steered).
    const message = old
      ? { ...old, status: old.status === "queued" ? status : old.status }
      : newMessage(e.message_id, "user", {
        content: pending ? pending.content : "",
        attachments: e.attachments ?? pending?.attachments ?? [],
        status,
        requestId: e.request_id,
        // Sent from another window: the text is not known here until loadHistory.
        placeholder: !pending,
        ...(e.steer ? { steer: true } : {}),
        ...(pending?.research ? { research: true } : {}),
        // The plan an execute_plan carries out, as it stood then (CONTRACT §7).
        ...(e.executes_plan ? { executesPlan: e.executes_plan } : {}),
      });
    return {
      ...upsertMessage(state, message),
      pending: pending ? state.pending.filter((p) => p !== pending) : state.pending,
    };
  },

  turn_start(state, e) {
    const cont = e.continue_message_id ?? null;
    let next = {
      ...state,
      turn: { id: e.turn_id, status: "running", userMessageId: e.user_message_id ?? null,
              messageId: cont, messageIds: [], modelId: null },
      notice: null,
      usage: null,
    };
    if (e.user_message_id != null) {
      // A queued message keeps its id as its turn starts: it joins the end of the branch.
      const m = findMessage(next, e.user_message_id);
      if (m && isQueued(m)) next = upsertMessage(next, { ...m, status: "complete" });
    }
    if (cont != null && !findMessage(next, cont)) {
      // A reply continued on a branch not shown (a reload replays the chat's last turn).
      next = { ...next, turn: { ...next.turn, elsewhere: true } };
    } else if (cont != null) {
      // The turn re-sends the saved text as its first deltas; start from empty.
      next = touchMessage(next, cont, e.turn_id);
    }
    return next;
  },

  content: (state, e) => appendText(state, e, "content"),
  reasoning: (state, e) => appendText(state, e, "reasoning"),

  message_saved(state, e) {
    // Tool result rows are shown through their call's tool_end; user rows through accepted.
    if (e.role !== "assistant") return state;
    if (!findMessage(state, e.message_id)) {
      const next = touchMessage(state, e.message_id, e.turn_id);
      return updateMessage(next, e.message_id, (m) => ({ ...m, saved: true }));
    }
    return updateMessage(state, e.message_id, (m) => (m.saved ? m : { ...m, saved: true }));
  },

  done(state, e) {
    return updateMessage(state, e.message_id, (m) => ({ ...m, status: "complete", saved: true }));
  },

  error(state, e) {
    if (e.code === "cancelled") {
      // Stop is what the person asked for: no error banner, the partial reply is kept.
      return mapTurnMessages(state, (m) => (m.status === STREAMING ? { ...m, status: "cancelled" } : m));
    }
    let next = { ...state, notice: { kind: "error", code: e.code, message: e.message, retryable: !!e.retryable } };
    if (e.code === "queue_full") {
      // The refused send is the oldest one not yet answered.
      const i = next.pending.findIndex((p) => !p.failed);
      if (i >= 0) next.pending = next.pending.map((p, j) => (j === i ? { ...p, failed: e.code } : p));
    }
    const turn = state.turn;
    if (turn && e.turn_id != null && e.turn_id === turn.id && turn.messageId != null) {
      next = updateMessage(next, turn.messageId, (m) => ({ ...m, error: { code: e.code, message: e.message } }));
    }
    return next;
  },

  turn_end(state, e) {
    const ended = END_STATUS[e.status] || "complete";
    const next = { ...state };
    if (state.turn && (state.turn.id === e.turn_id || e.turn_id == null)) {
      next.turn = { ...state.turn, status: e.status };
    } else {
      next.turn = { id: e.turn_id, status: e.status, userMessageId: null, messageId: null, messageIds: [],
                    modelId: null };
    }
    return { ...next, messages: mapMessages(next.messages, (m) => (m.status === STREAMING ? { ...m, status: ended } : m)) };
  },

  title_update: (state, e) => (state.title === e.title ? state : { ...state, title: e.title }),

  usage(state, e) {
    const { type, event_id, turn_id, epoch, ...usage } = e; // eslint-disable-line no-unused-vars
    return { ...state, usage };
  },

  fallback(state, e) {
    const next = { ...state, notice: { kind: "fallback", message: e.reason, from_model_id: e.from_model_id,
                                       to_model_id: e.to_model_id } };
    if (state.turn) next.turn = { ...state.turn, modelId: e.to_model_id };
    return next;
  },

  snapshot(state, e) {
    let next = { ...state, lastEventId: e.last_event_id ?? e.event_id ?? state.lastEventId };
    if (Array.isArray(e.queue)) next = setQueue(next, e.queue);
    const status = e.status === "limit" ? "error" : e.status;
    if (e.turn_id != null) {
      const same = state.turn && state.turn.id === e.turn_id;
      next.turn = {
        id: e.turn_id,
        status: status === STREAMING ? "running" : TURN_STATUS[status] || "completed",
        userMessageId: same ? state.turn.userMessageId : null,
        messageId: e.message_id ?? null,
        messageIds: e.message_id != null ? [e.message_id] : [],
        modelId: same ? state.turn.modelId : null,
      };
      // The sources it gathered go on to its next reply (`sources`, touchMessage).
      const sources = mergeSources((same && state.turn.sources) || [], Array.isArray(e.sources) ? e.sources : []);
      if (sources.length) next.turn.sources = sources;
    } else if (turnRunning(state)) {
      // Nothing is retained: the turn we were following ended while we were away.
      next.turn = { ...state.turn, status: TURN_STATUS[status] || "completed" };
    }
    if (e.message_id == null) return next;
    const old = findMessage(next, e.message_id);
    const done = status !== STREAMING;
    // A finished reply the history read does not hold is on another branch (a stored
    // snapshot names the chat's newest reply on any branch) or came while this window was
    // away, and then that history is read again (chat-session.js); a running reply is on
    // the active branch, the one shown.
    if (!old && done && next.messages.length) return next;
    const calls = (e.tool_calls || []).map((c) => {
      const known = old?.toolCalls.find((k) => k.id === c.id);
      return known ? { ...known, name: c.name, arguments: known.edited ? known.arguments : c.arguments }
        : toolCall(c.id, c.name, c.arguments, done ? "done" : "running");
    });
    const message = {
      ...(old || newMessage(e.message_id, "assistant", { modelId: next.turn?.modelId ?? null })),
      content: e.content ?? "", reasoning: e.reasoning ?? "", toolCalls: calls, status,
    };
    const sources = e.turn_id != null ? next.turn.sources : Array.isArray(e.sources) ? e.sources : null;
    if (sources && sources.length) message.sources = mergeSources(message.sources || [], sources);
    return upsertMessage(next, message);
  },

  // The server restarted: whatever was streaming died with the old process (the new one
  // marks such rows `interrupted` at start).
  [NEW_EPOCH](state) {
    const messages = mapMessages(state.messages, (m) => (m.status === STREAMING ? { ...m, status: "interrupted" } : m));
    const turn = turnRunning(state) ? { ...state.turn, status: "failed" } : state.turn;
    return messages === state.messages && turn === state.turn ? state : { ...state, messages, turn };
  },
};

function appendText(state, e, field) {
  if (!e.delta && findMessage(state, e.message_id)) return state;
  const next = touchMessage(state, e.message_id, e.turn_id);
  const id = e.message_id ?? next.turn?.messageId;
  if (id == null) return next;
  return updateMessage(next, id, (m) => ({ ...m, [field]: m[field] + (e.delta || "") }));
}
