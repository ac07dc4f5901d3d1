// Declared inputs of a view's parts (web/js/view-inputs.js): a part is drawn again only
// when one of its inputs changed by identity, and reading an input it did not declare
// fails at once instead of leaving the part stale.
// Run: node --test tests/js/
import { test } from "node:test";
import assert from "node:assert/strict";

import { Inputs } from "../../web/js/view-inputs.js";

const source = (state, extra = {}) => ({ state, ...extra });

test("the first read gives every input; an unchanged source gives null", () => {
  const inputs = new Inputs({ queue: ({ state }) => state.queue, title: ({ state }) => state.title });
  const state = { queue: [], title: "T", other: 1 };
  const first = inputs.read(source(state));
  assert.equal(first.queue, state.queue);
  assert.equal(first.title, "T");
  assert.equal(inputs.read(source(state)), null);
  // A change to what the part does not read is no change for it.
  assert.equal(inputs.read(source({ ...state, other: 2 })), null);
});

test("a new object for an input is a change, an equal copy too (identity, not contents)", () => {
  const inputs = new Inputs({ queue: ({ state }) => state.queue });
  const queue = [{ message_id: 1 }];
  inputs.read(source({ queue }));
  assert.equal(inputs.read(source({ queue })), null);
  const next = inputs.read(source({ queue: [...queue] }));
  assert.deepEqual(next.queue, queue);
});

test("reading an input that was not declared throws", () => {
  const inputs = new Inputs({ queue: ({ state }) => state.queue });
  const read = inputs.read(source({ queue: [], title: "T" }));
  assert.throws(() => read.title, /input title is not declared/);
  assert.throws(() => { read.queue = []; }, TypeError);
});

test("an undefined value is still a declared input", () => {
  const inputs = new Inputs({ chat: ({ s }) => s?.chat });
  const read = inputs.read({});
  assert.equal(read.chat, undefined);
  assert.equal(inputs.read({}), null);
  assert.equal(inputs.read({ s: { chat: { id: 1 } } }).chat.id, 1);
});

test("forget: the next read gives the inputs again", () => {
  const inputs = new Inputs({ queue: ({ state }) => state.queue });
  const state = { queue: [] };
  inputs.read(source(state));
  inputs.forget();
  assert.ok(inputs.read(source(state)));
  assert.equal(inputs.read(source(state)), null);
});

test("every input needs a selector", () => {
  assert.throws(() => new Inputs({ queue: "state.queue" }), /input queue has no selector/);
});
