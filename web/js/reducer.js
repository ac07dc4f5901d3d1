// The chat's client state as a pure fold over server events: (state, event) → state.
//
// No DOM, no I/O, no clock: the same function runs in the browser and under
// `node --test` against the fixtures the backend tests read too
// (tests/fixtures/events). Inputs are never mutated; an event that changes
// nothing returns the very same state object, so a view can skip re-rendering
// with one `===`.
//
// This module is the fold's core: positions, and a table of handlers by event type.
// Each feature keeps its own events' handlers (and the slices of state they keep) in its
// own module and hands them over with registerHandlers, below, the way the server's
// features define their event types; several handlers of one type run in the order they
// were registered, each on what the one before returned.
//
// Positions: every server event but `pong` carries `event_id` (per chat,
// increasing) and `epoch` (per server start). The state remembers the last id
// it applied; an event at or below it in the same epoch was already applied
// and is dropped, which is what makes a replay after reconnect safe. The
// socket must therefore `resume` with `after_event_id: state.lastEventId`
// exactly: the server only merges text deltas above that cursor, so a merged
// event never holds text the state already has.

import { NEW_EPOCH } from "./chat-state.js";
import { turnEvents, turnSlices } from "./turn-events.js";
import { historyEvents, historySlices } from "./history-page.js";
import { queueEvents, queueSlices } from "./queue.js";
import { toolEvents, toolSlices } from "./tool-calls.js";
import { questionEvents, questionSlices } from "./questions.js";
import { planEvents } from "./plans.js";
import { sourceEvents } from "./citations.js";
import { contextEvents, contextSlices } from "./context-marks.js";
import { researchEvents, researchSlices } from "./research.js";
import { memoryEvents, memorySlices } from "./memory.js";
import { documentEvents, documentSlices } from "./documents.js";
import { imageEvents } from "./images.js";
import { compareEvents, compareSlices, columnEvents } from "./compare.js";

// Event type (or NEW_EPOCH) → its handlers, in registration order.
const HANDLERS = new Map();
// The handlers of a compare's column events (those that carry `model_id`, CONTRACT §10): such an
// event is a reply beside the branch, so it goes to these alone, never to the branch's.
const COLUMN_HANDLERS = new Map(Object.entries(columnEvents).map(([type, fn]) => [type, [fn]]));
// The slices of state the features keep, with their starting values.
const SLICES = {};

/**
 * Hand a feature's handlers to the fold. `handlers`: {type: (state, event) → state}, each
 * run on the state already positioned at its event (a key NEW_EPOCH: (state) → state, run
 * when the server restarted); `slices`: {name: starting value}, the state the feature keeps.
 */
export function registerHandlers(handlers, slices = {}) {
  for (const type of Reflect.ownKeys(handlers)) {
    const fn = handlers[type];
    if (typeof fn !== "function") throw new TypeError(`the handler of ${String(type)} is not a function`);
    HANDLERS.set(type, [...(HANDLERS.get(type) || []), fn]);
  }
  for (const [name, value] of Object.entries(slices)) {
    if (name in SLICES) throw new Error(`two features keep the state's ${name}`);
    SLICES[name] = value;
  }
}

registerHandlers(turnEvents, turnSlices);
registerHandlers(historyEvents, historySlices);
registerHandlers(queueEvents, queueSlices);
registerHandlers(toolEvents, toolSlices);
registerHandlers(questionEvents, questionSlices);
registerHandlers(planEvents);
registerHandlers(sourceEvents);
registerHandlers(contextEvents, contextSlices);
registerHandlers(researchEvents, researchSlices);
registerHandlers(memoryEvents, memorySlices);
registerHandlers(documentEvents, documentSlices);
registerHandlers(imageEvents);
registerHandlers(compareEvents, compareSlices);

export function initialState(chatId) {
  // A copy for each chat: no two chats' states share a starting list.
  return { chatId, epoch: null, lastEventId: 0, ...structuredClone(SLICES) };
}

/** Apply one server event. Returns `state` itself when the event changes nothing. */
export function applyEvent(state, event) {
  if (!event || typeof event !== "object") return state;
  const handlers = (event.model_id != null && COLUMN_HANDLERS.get(event.type)) || HANDLERS.get(event.type);
  if (!handlers) return state; // pong, and types this client does not know yet
  let next = state;
  if (event.epoch != null && event.epoch !== state.epoch) {
    next = newEpoch(state, event.epoch);
  } else if (Number.isInteger(event.event_id) && isSeen(state, event)) {
    return state;
  }
  if (Number.isInteger(event.event_id) && event.type !== "snapshot") {
    next = { ...next, lastEventId: event.event_id };
  }
  for (const fn of handlers) next = fn(next, event);
  return next;
}

function isSeen(state, event) {
  // A snapshot describes the state *at* its id, so an equal id is still news
  // (a fresh server answers a resume with a snapshot at id 0).
  if (event.type === "snapshot") return (event.last_event_id ?? event.event_id) < state.lastEventId;
  return event.event_id <= state.lastEventId;
}

// The server restarted: its ids start over, and each feature drops what died with the
// old process.
function newEpoch(state, epoch) {
  let next = { ...state, epoch, lastEventId: 0 };
  if (state.epoch == null) return next;
  for (const fn of HANDLERS.get(NEW_EPOCH) || []) next = fn(next);
  return next;
}
