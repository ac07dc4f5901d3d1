// Modes and plans as the window shows them (web/js/plans.js), and the reducer's `plan`
// case (web/js/reducer.js): a plan event puts the plan on its message, a history page
// brings it back after a reload, and the newest card of a plan is the one that executes.
// Run: node --test tests/js/
import { test, describe } from "node:test";
import assert from "node:assert/strict";

import { MODES, canExecute, modeInfo, newestPlans, planExecutions, planProgress, planState } from "../../web/js/plans.js";
import { applyEvent, initialState } from "../../web/js/reducer.js";
import { loadHistory } from "../../web/js/history-page.js";

const EPOCH = "e1";
const STEPS = [{ text: "Read", status: "done" }, { text: "Write", status: "active" }, { text: "Check", status: "pending" }];
let ids = 0;
const ev = (type, fields) => ({ type, event_id: ++ids, turn_id: "t1", epoch: EPOCH, ...fields });

describe("modes", () => {
  test("the four modes of CONTRACT §7, in order, each with a hint", () => {
    assert.deepEqual(MODES.map((m) => m.value), ["ask", "plan", "edit", "auto"]);
    assert.ok(MODES.every((m) => m.label && m.hint));
  });

  test("an unknown or missing mode reads as Ask, the server's default", () => {
    assert.equal(modeInfo("edit").label, "Edit");
    assert.equal(modeInfo(undefined).value, "ask");
    assert.equal(modeInfo("yolo").value, "ask");
  });
});

describe("planProgress", () => {
  test("counts by status and says how far it is", () => {
    assert.deepEqual(planProgress({ steps: STEPS }),
      { total: 3, done: 1, active: 1, pending: 1, finished: false, text: "1 of 3 steps done" });
  });

  test("finished once every step is done; no steps is not finished", () => {
    const done = planProgress({ steps: STEPS.map((s) => ({ ...s, status: "done" })) });
    assert.equal(done.finished, true);
    assert.equal(done.text, "All 3 steps done");
    assert.equal(planProgress({ steps: [{ text: "x", status: "done" }] }).text, "All 1 step done");
    assert.equal(planProgress({ steps: [] }).finished, false);
    assert.equal(planProgress(null).total, 0);
  });
});

describe("which card executes", () => {
  const messages = [
    { id: 2, plan: { plan_id: "p1", steps: STEPS } },
    { id: 3 },
    { id: 5, plan: { plan_id: "p1", steps: STEPS } },
    { id: 7, plan: { plan_id: "p2", steps: STEPS } },
  ];

  test("the newest message carrying a plan holds its current card", () => {
    assert.deepEqual([...newestPlans(messages)], [["p1", 5], ["p2", 7]]);
    assert.equal(newestPlans([]).size, 0);
  });

  test("only the newest card, only while no reply runs, only with a step left", () => {
    const plan = { plan_id: "p1", steps: STEPS };
    assert.equal(canExecute(plan, { newest: true, running: false }), true);
    assert.equal(canExecute(plan, { newest: false, running: false }), false);
    assert.equal(canExecute(plan, { newest: true, running: true }), false);
    const done = { ...plan, steps: STEPS.map((s) => ({ ...s, status: "done" })) };
    assert.equal(canExecute(done, { newest: true, running: false }), false);
  });
});

describe("reducer: plan", () => {
  test("a plan event puts the plan on the message it names, and a repeat changes nothing", () => {
    let s = applyEvent(initialState("c1"), ev("turn_start", { user_message_id: null, continue_message_id: null }));
    s = applyEvent(s, ev("content", { delta: "Plan:", message_id: 2 }));
    const planned = applyEvent(s, ev("plan", { plan_id: "p1", steps: STEPS, message_id: 2 }));
    assert.deepEqual(planned.messages.find((m) => m.id === 2).plan, { plan_id: "p1", steps: STEPS });
    const again = applyEvent(planned, ev("plan", { plan_id: "p1", steps: STEPS, message_id: 2 }));
    assert.equal(again.messages, planned.messages);
  });

  test("without a message id, the newest message of that plan takes it", () => {
    let s = loadHistory(initialState("c1"), [
      { id: 1, role: "assistant", content: "", status: "complete", plan: { plan_id: "p1", steps: STEPS } },
      { id: 2, role: "assistant", content: "", status: "complete", plan: { plan_id: "p1", steps: STEPS } },
    ], false);
    const next = STEPS.map((x) => ({ ...x, status: "done" }));
    s = applyEvent(s, ev("plan", { plan_id: "p1", steps: next }));
    assert.deepEqual(s.messages.map((m) => m.plan.steps[2].status), ["pending", "done"]);
  });

  test("a plan for a message not shown changes nothing", () => {
    const s = initialState("c1");
    assert.equal(applyEvent(s, ev("plan", { plan_id: "p9", steps: STEPS, message_id: 99 })).messages, s.messages);
  });

  test("a reload shows the plan from the message's row; rows without one have none", () => {
    const s = loadHistory(initialState("c1"), [
      { id: 1, role: "user", content: "plan it", status: "complete" },
      { id: 2, role: "assistant", content: "Here.", status: "complete", plan: { plan_id: "p1", steps: STEPS } },
    ], false);
    assert.equal(s.messages[0].plan, null);
    assert.deepEqual(s.messages[1].plan, { plan_id: "p1", steps: STEPS });
  });
});

describe("an executed plan is a state, not offered twice", () => {
  const plan = { plan_id: "p1", steps: STEPS };
  const executed = (steps, messageId = 9) => ({ steps, messageId });

  test("the last execution of each plan on the branch, from the user messages that carried it out", () => {
    const got = planExecutions([
      { id: 4, role: "user", executesPlan: { plan_id: "p1", steps: STEPS } },
      { id: 5, role: "assistant", plan: plan },
      { id: 9, role: "user", executesPlan: { plan_id: "p1", steps: [] } },
      { id: 10, role: "user" },
    ]);
    assert.deepEqual([...got], [["p1", { steps: [], messageId: 9 }]]);
  });

  test("never executed: offered as before", () => {
    assert.deepEqual(planState(plan, { newest: true, running: false }), { executable: true, state: "" });
    assert.deepEqual(planState(plan, { newest: false, running: false }), { executable: false, state: "" });
  });

  test("while its reply runs it is executing; after, unchanged, it is executed and not offered", () => {
    assert.deepEqual(planState(plan, { newest: true, running: true, execution: executed(STEPS), lastUserId: 9 }),
      { executable: false, state: "executing" });
    assert.deepEqual(planState(plan, { newest: true, running: false, execution: executed(STEPS), lastUserId: 9 }),
      { executable: false, state: "executed" });
    // Another reply running later (the person wrote again): still executed, not executing.
    assert.deepEqual(planState(plan, { newest: true, running: true, execution: executed(STEPS), lastUserId: 12 }),
      { executable: false, state: "executed" });
  });

  test("a plan changed since it was executed can be executed again; one all done is executed", () => {
    const changed = { plan_id: "p1", steps: STEPS.map((s, i) => ({ ...s, status: i === 1 ? "done" : s.status })) };
    assert.deepEqual(planState(changed, { newest: true, running: false, execution: executed(STEPS) }),
      { executable: true, state: "" });
    const done = { plan_id: "p1", steps: STEPS.map((s) => ({ ...s, status: "done" })) };
    assert.deepEqual(planState(done, { newest: true, running: false, execution: executed(STEPS) }),
      { executable: false, state: "executed" });
  });
});
