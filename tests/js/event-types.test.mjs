// The server's event definitions (tests/fixtures/event-types.json, exported from
// backend/turns/events.py and kept current by tests/test_event_types.py) against the
// web UI: the reducer handles every type the chat socket sends, the chat list every
// app socket frame, and every fixture event (tests/fixtures/events) is one the server
// could send. A new server event, or a fixture that drifts from the server, fails here.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

import { initialState, applyEvent } from "../../web/js/reducer.js";
import { applyChatFrame } from "../../web/js/chat-list.js";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(here, "..", "fixtures");
const DEFS = JSON.parse(readFileSync(join(FIXTURES, "event-types.json"), "utf8"));
const EVENTS = join(FIXTURES, "events");
const fixtures = readdirSync(EVENTS).filter((f) => f.endsWith(".json")).sort()
  .map((f) => ({ file: f, ...JSON.parse(readFileSync(join(EVENTS, f), "utf8")) }));

// Chat socket types applyEvent leaves alone on purpose, and why.
const NOT_IN_REDUCER = {
  pong: "a keep-alive answer: the socket drops it (web/app/socket.js)",
};
// App socket frames the chat list's pure rules do not take, and where they are handled.
const NOT_IN_CHAT_LIST = {
  ready: "web/app/app-socket.js: reads the chat list once",
  folders_changed: "web/app/main.js: reads the folders again",
  resync: "web/app/main.js: reads the chats and folders again",
  pong: "web/app/app-socket.js: a keep-alive answer",
  error: "web/app/app-socket.js: an answer to a malformed frame",
};

/** Whether `value` is of the exported type `spec` (see describe() in backend/turns/events.py). */
function conforms(value, spec) {
  if (Array.isArray(spec)) return spec.some((s) => conforms(value, s));
  if (typeof spec === "object") {
    if (spec.array !== undefined) return Array.isArray(value) && value.every((v) => conforms(v, spec.array));
    return isObject(value) && problemsOf(value, spec.object, "").length === 0;
  }
  switch (spec) {
    case "string": return typeof value === "string";
    case "integer": return Number.isInteger(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
    case "array": return Array.isArray(value);
    case "object": return isObject(value);
    default: throw new Error(`unknown type ${JSON.stringify(spec)} in event-types.json`);
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** What in `value` the definition {required, optional, values} does not allow. */
function problemsOf(value, def, where) {
  const allowed = { ...def.required, ...def.optional };
  const out = Object.keys(def.required).filter((k) => !(k in value)).map((k) => `${where} lacks ${k}`);
  for (const [k, v] of Object.entries(value)) {
    const shown = `${where}: ${k} = ${JSON.stringify(v)}`;
    if (!(k in allowed)) out.push(`${where} has no field ${k}`);
    else if (!conforms(v, allowed[k])) out.push(`${shown} is not ${JSON.stringify(allowed[k])}`);
    else if (def.values?.[k] && !def.values[k].includes(v)) out.push(`${shown} is not one of ${def.values[k]}`);
  }
  return out;
}

function problems(event, table = DEFS.chat) {
  const def = table[event.type];
  if (!def) return [`unknown event type ${JSON.stringify(event.type)}`];
  const { type, ...fields } = event;
  return problemsOf(fields, def, `${type} ${event.event_id ?? ""}`.trim());
}

/** A value of the exported type, for a probe event. */
function sample(spec) {
  if (Array.isArray(spec)) return sample(spec[0]);
  if (typeof spec === "object") {
    if (spec.array !== undefined) return [];
    return Object.fromEntries(Object.entries(spec.object.required).map(([k, s]) => [k, sample(s)]));
  }
  return { string: "x", integer: 1, number: 0, boolean: false, null: null, array: [], object: {} }[spec];
}

/** The smallest event of a type the server could send. */
function probe(type, table = DEFS.chat) {
  const def = table[type];
  const event = { type };
  for (const [k, spec] of Object.entries(def.required)) event[k] = def.values[k] ? def.values[k][0] : sample(spec);
  if ("epoch" in event) event.epoch = "probe-epoch";
  return event;
}

/**
 * Whether applyEvent has a case for the type. An event from a new epoch moves the state
 * (its epoch and ids start over) before its case runs; a type without one returns the
 * state untouched.
 */
function reducerHandles(type) {
  const state = initialState("c_probe");
  return applyEvent(state, probe(type)) !== state;
}

describe("the exported definitions", () => {
  test("name the events a chat socket and the app socket send", () => {
    for (const type of ["accepted", "content", "turn_end", "snapshot", "pong", "branched", "active_changed"]) {
      assert.ok(DEFS.chat[type], `event-types.json has no ${type}`);
    }
    assert.deepEqual(DEFS.chat.pong.required, {});
    assert.ok(DEFS.app.chat_changed && DEFS.app.ready);
  });

  test("a probe event of every type conforms, and a broken one does not", () => {
    for (const type of Object.keys(DEFS.chat)) assert.deepEqual(problems(probe(type)), [], type);
    const content = probe("content");
    assert.deepEqual(problems({ ...content, message_id: "7" }), [`content 1: message_id = "7" is not "integer"`]);
    assert.deepEqual(problems({ ...content, extra: 1 }), ["content 1 has no field extra"]);
    const { delta, ...noDelta } = content; // eslint-disable-line no-unused-vars
    assert.deepEqual(problems(noDelta), ["content 1 lacks delta"]);
    assert.equal(problems({ ...probe("turn_end"), status: "done" }).length, 1);
  });
});

describe("the reducer handles every server event", () => {
  for (const type of Object.keys(DEFS.chat)) {
    test(type, () => {
      if (type in NOT_IN_REDUCER) {
        // A type that gained a case must leave the list, so the list stays true.
        assert.equal(reducerHandles(type), false, `applyEvent handles ${type} now: drop it from NOT_IN_REDUCER`);
      } else {
        assert.ok(reducerHandles(type), `applyEvent has no case for the server's ${type} event`);
      }
    });
  }

  test("the list of ignored types names only server events", () => {
    for (const type of Object.keys(NOT_IN_REDUCER)) assert.ok(DEFS.chat[type], type);
  });
});

describe("the chat list handles every app socket frame", () => {
  for (const type of Object.keys(DEFS.app)) {
    test(type, () => {
      if (type in NOT_IN_CHAT_LIST) return;
      const frame = probe(type, DEFS.app);
      if (type === "chat_changed") frame.chat = { id: "c_1", updated_at: "2026-01-01T00:00:00Z" };
      const before = type === "chat_removed" ? [{ id: frame.chat_id, updated_at: "x" }] : [];
      assert.notEqual(applyChatFrame(before, frame), before, `applyChatFrame ignores ${type}`);
    });
  }
});

describe("every fixture event is one the server could send", () => {
  for (const fx of fixtures) {
    test(fx.file, () => {
      for (const event of fx.events) assert.deepEqual(problems(event), [], JSON.stringify(event));
    });
  }
});
