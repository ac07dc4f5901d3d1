// Compare (CONTRACT §10, docs/PROTOCOL.md "Compare"): one message answered by 2–4 models at
// once, shown as columns. Pure, no DOM: the fold's handlers for a compare's events, and what its
// view reads (web/app/views/compare-view.js).
//
// `compares` holds one entry per user message that asked a compare, by that message's id:
// {userId, turnId, running, columns: [{modelId, messageId, steps, status, error, usage}]},
// the columns in the order the models were named. A column's `steps` are its reply's assistant
// messages (a reply that calls tools has several): {id, content, reasoning, toolCalls, usage,
// status}. The events of a column carry `model_id`: web/js/reducer.js gives those only to the
// handlers here (`columnEvents`), so they never touch the branch's messages.

import { NEW_EPOCH, updateMessage } from "./chat-state.js";

// turn_end status → the status a column still streaming ends with.
const END_STATUS = { completed: "complete", cancelled: "cancelled", failed: "error", limit: "error" };
const TURN_STATUS = { streaming: "running", complete: "completed", cancelled: "cancelled", error: "failed",
                      interrupted: "failed", limit: "limit" };
const DONE = new Set(["complete", "cancelled", "error", "interrupted", "limit"]);

export const compareSlices = { compares: {} };

const step = (id, fields = {}) => ({ id, content: "", reasoning: "", toolCalls: [], usage: null, status: "streaming",
                                     ...fields });

function column(modelId, messageId) {
  return { modelId, messageId, steps: [step(messageId)], status: "streaming", error: null, usage: null };
}

/** The compare entry `e` (an event of a column) belongs to: its turn's, else the running one of its model. */
function entryOf(state, e) {
  const all = Object.values(state.compares);
  return all.find((c) => c.turnId != null && c.turnId === e.turn_id)
    || all.find((c) => c.running && c.columns.some((col) => col.modelId === e.model_id)) || null;
}

function withEntry(state, entry) {
  return { ...state, compares: { ...state.compares, [entry.userId]: entry } };
}

/** `fn(column, e)` over the column of `e` (by its model); the very same state when it has none. */
function onColumn(state, e, fn) {
  const entry = entryOf(state, e);
  if (!entry) return state;
  const i = entry.columns.findIndex((c) => c.modelId === e.model_id);
  if (i < 0) return state;
  const now = fn(entry.columns[i], e);
  if (now === entry.columns[i]) return state;
  const columns = entry.columns.slice();
  columns[i] = now;
  return withEntry(state, { ...entry, turnId: entry.turnId ?? e.turn_id ?? null, columns });
}

/** `fn(step)` over the column's step `id` (a new step when the reply moved on to another message). */
function onStep(col, id, fn) {
  const i = col.steps.findIndex((s) => s.id === id);
  const steps = col.steps.slice();
  if (i < 0) steps.push(fn(step(id)));
  else steps[i] = fn(steps[i]);
  return { ...col, steps };
}

function appendText(field) {
  return (state, e) => (e.delta ? onColumn(state, e, (col) => onStep(col, e.message_id,
    (s) => ({ ...s, [field]: s[field] + e.delta }))) : state);
}

function callState(col, callId, fn) {
  let changed = false;
  const steps = col.steps.map((s) => {
    if (!s.toolCalls.some((c) => c.id === callId)) return s;
    changed = true;
    return { ...s, toolCalls: s.toolCalls.map((c) => (c.id === callId ? fn(c) : c)) };
  });
  return changed ? { ...col, steps } : col;
}

function addCall(col, e, running) {
  if (col.steps.some((s) => s.toolCalls.some((c) => c.id === e.call_id))) {
    return callState(col, e.call_id, (c) => ({ ...c, state: running }));
  }
  return onStep(col, e.message_id, (s) => ({ ...s, toolCalls: [...s.toolCalls,
    { id: e.call_id, name: e.name, state: running, ok: null }] }));
}

const ended = (col, status) => (DONE.has(col.status) ? col : { ...col, status,
  steps: col.steps.map((s) => (s.status === "streaming" ? { ...s, status } : s)) });

/** The events of a compare's columns (each carries `model_id`): the fold routes them only here. */
export const columnEvents = {
  content: appendText("content"),
  reasoning: appendText("reasoning"),
  tool_preparing: (state, e) => onColumn(state, e, (col) => addCall(col, e, "preparing")),
  tool_start: (state, e) => onColumn(state, e, (col) => addCall(col, e, "running")),
  tool_end: (state, e) => onColumn(state, e, (col) => callState(col, e.call_id, (c) => ({ ...c, state: "done", ok: !!e.ok }))),
  done: (state, e) => onColumn(state, e, (col) => ended(col, "complete")),
  error(state, e) {
    return onColumn(state, e, (col) => (e.code === "cancelled" ? ended(col, "cancelled")
      : { ...ended(col, "error"), error: { code: e.code, message: e.message } }));
  },
  usage(state, e) {
    const { type, event_id, turn_id, epoch, model_id, message_id, ...usage } = e; // eslint-disable-line no-unused-vars
    return onColumn(state, e, (col) => ({ ...col, usage }));
  },
  // Saved rows, sources, progress and notices of a column change nothing its view shows.
  message_saved: (state) => state,
  tool_progress: (state) => state,
  sources: (state) => state,
  fallback: (state) => state,
  context_trimmed: (state) => state,
  // A column's drawings show with its saved rows (GET …/compare), not on the branch.
  image: (state) => state,
  image_partial: (state) => state,

  /** A column's state at once (a resume that fell behind the log): its message's whole text. */
  snapshot(state, e) {
    let next = { ...state, lastEventId: e.last_event_id ?? e.event_id ?? state.lastEventId };
    if (e.turn_id != null) {
      const running = e.status === "streaming";
      // The columns share one turn: it runs while any of them does.
      const was = state.turn && state.turn.id === e.turn_id ? state.turn : null;
      const status = running || was?.status === "running" ? "running" : TURN_STATUS[e.status] || "completed";
      next.turn = { id: e.turn_id, status, userMessageId: was?.userMessageId ?? null, messageId: null,
                    messageIds: [], modelId: null };
    }
    const status = e.status === "limit" ? "error" : e.status;
    return onColumn(next, e, (col) => {
      const now = onStep(col, e.message_id, (s) => ({ ...s, content: e.content ?? "", reasoning: e.reasoning ?? "", status }));
      return status === "streaming" ? now : { ...now, status };
    });
  },
};

/** The compare's own handlers among the turn's events (a compare starts and ends like any turn). */
export const compareEvents = {
  turn_start(state, e) {
    if (!Array.isArray(e.compare) || e.user_message_id == null) return state;
    const old = state.compares[e.user_message_id];
    if (old && old.turnId === e.turn_id) return state; // a replay
    // The message says it asked a compare (a reload reads the same from its row).
    const models = e.compare.map((c) => c.model_id);
    const next = updateMessage(state, e.user_message_id, (m) => (m.compare ? m : { ...m, compare: models }));
    return withEntry(next, { userId: e.user_message_id, turnId: e.turn_id, running: true,
                             columns: e.compare.map((c) => column(c.model_id, c.message_id)) });
  },

  turn_end(state, e) {
    const entry = Object.values(state.compares).find((c) => c.turnId === e.turn_id);
    if (!entry) return state;
    const status = END_STATUS[e.status] || "complete";
    return withEntry(state, { ...entry, running: false, columns: entry.columns.map((c) => ended(c, status)) });
  },

  // The server restarted: a column still streaming died with the old process.
  [NEW_EPOCH](state) {
    const running = Object.values(state.compares).filter((c) => c.running);
    if (!running.length) return state;
    const compares = { ...state.compares };
    for (const c of running) compares[c.userId] = { ...c, running: false, columns: c.columns.map((col) => ended(col, "interrupted")) };
    return { ...state, compares };
  },
};

/**
 * The compare as saved (GET …/messages/{id}/compare, `body`), for message `userId`: what a
 * reload shows. A column's text that streams in this window is newer than its saved row and
 * stays; finished columns take the saved truth (their usage, timings and errors).
 */
export function loadedCompare(state, userId, body) {
  if (!body || !Array.isArray(body.columns)) return state;
  const old = state.compares[userId];
  const columns = body.columns.map((saved) => {
    const live = old?.columns.find((c) => c.modelId === saved.model_id);
    const rows = (saved.messages || []).filter((m) => m.role === "assistant");
    const results = new Map((saved.messages || []).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m]));
    const steps = rows.map((m) => step(m.id, {
      content: m.content ?? "", reasoning: m.reasoning ?? "", usage: m.usage ?? null, status: m.status,
      toolCalls: (m.tool_calls || []).map((c) => ({ id: c.id, name: c.name,
        state: results.has(c.id) ? "done" : m.status === "streaming" ? "running" : "done",
        ok: results.has(c.id) ? !results.get(c.id).tool_error : null })),
    }));
    const last = rows[rows.length - 1];
    const status = last ? last.status : "complete";
    const fromSaved = { modelId: saved.model_id, messageId: saved.message_id, steps, status,
                        error: last?.error ?? null, usage: live?.usage ?? null };
    // A column still writing here keeps its live text: the saved row lags it by up to a second.
    if (live && live.status === "streaming" && status === "streaming") return live;
    return fromSaved;
  });
  const running = columns.some((c) => c.status === "streaming") && !!old?.running;
  return withEntry(state, { userId, turnId: old?.turnId ?? null, running, columns, loaded: true });
}

/** The figures a column shows: its time to first token, speed, tokens and cost, from its saved steps. */
export function columnFigures(col) {
  const saved = col.steps.map((s) => s.usage).filter(Boolean);
  const first = saved[0];
  const last = saved[saved.length - 1];
  const sum = (key) => saved.reduce((n, u) => n + (Number(u[key]) || 0), 0);
  const costs = saved.map((u) => u.cost).filter((c) => c != null);
  const tokens = saved.length ? sum("output_tokens") : col.usage?.output_tokens ?? null;
  return {
    ttftMs: first?.ttft_ms ?? null,
    tokensPerS: last?.tokens_per_s ?? null,
    tokens,
    cost: costs.length ? costs.reduce((a, b) => a + b, 0) : col.usage?.cost ?? null,
    estimated: saved.some((u) => u.estimated) || !!col.usage?.estimated,
  };
}

/** The column whose reply is on the active branch: the one `branchIds` holds, else the first. */
export function activeColumn(entry, branchIds) {
  for (const col of entry.columns) if (col.steps.some((s) => branchIds.has(s.id)) || branchIds.has(col.messageId)) return col;
  return entry.columns[0];
}

/** The messages the thread shows for a compare's turn: its user message, not its replies (the
 * columns show them). `messages` the branch in order; the ids of the rows to leave out. */
export function repliesInColumns(messages) {
  const out = new Set();
  let inCompare = false;
  for (const m of messages) {
    if (m.role === "user") inCompare = Array.isArray(m.compare) && m.compare.length > 1 && m.status !== "queued";
    else if (inCompare) out.add(m.id);
  }
  return out;
}
