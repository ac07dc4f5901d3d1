import { test } from "node:test";
import assert from "node:assert/strict";
import { addUsage, answerSteps } from "../../web/js/answer-steps.js";

const u = (i, o, extra = {}) => ({ input_tokens: i, output_tokens: o, ...extra });

test("tool steps and the answer after them are one answer: first, middle, last, the total on the last", () => {
  const got = answerSteps([
    { id: 1, role: "user" },
    { id: 2, role: "assistant", usage: u(100, 10) },
    { id: 3, role: "tool" },
    { id: 4, role: "assistant", usage: u(150, 5) },
    { id: 5, role: "tool" },
    { id: 6, role: "assistant", usage: u(200, 40) },
    { id: 7, role: "user" },
    { id: 8, role: "assistant", usage: u(300, 9) },
  ]);
  assert.deepEqual([...got.keys()], [2, 4, 6]); // a reply of one step is not listed
  assert.deepEqual([2, 4, 6].map((id) => got.get(id).position), ["first", "middle", "last"]);
  assert.ok([2, 4, 6].every((id) => got.get(id).first === 2 && got.get(id).steps === 3));
  assert.equal(got.get(2).usage, null);
  assert.deepEqual(got.get(6).usage, { input_tokens: 450, output_tokens: 55 });
});

test("a reply still being written is grouped as far as it goes", () => {
  const got = answerSteps([{ id: 1, role: "user" }, { id: 2, role: "assistant" }, { id: 3, role: "tool" },
    { id: 4, role: "assistant", usage: null }]);
  assert.deepEqual(got.get(4), { first: 2, steps: 2, position: "last", usage: null });
});

test("usage adds up: estimated if any step was, cost only when every step has one", () => {
  assert.equal(addUsage([null, u(0, 0)]), null);
  assert.deepEqual(addUsage([u(1, 2, { estimated: true }), u(3, 4)]), { input_tokens: 4, output_tokens: 6, estimated: true });
  assert.deepEqual(addUsage([u(1, 2, { cost: 0.5 }), u(3, 4, { cost: 0.25 })]), { input_tokens: 4, output_tokens: 6, cost: 0.75 });
  assert.deepEqual(addUsage([u(1, 2, { cost: 0.5 }), u(3, 4)]), { input_tokens: 4, output_tokens: 6 });
});
