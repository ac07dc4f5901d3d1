// Modes and plans (CONTRACT §7) as the window shows them: the modes the composer offers,
// a plan's progress in words, which card of a plan is its newest, and when it can be
// executed; and the `plan` event that puts a plan on its message (`planEvents`, registered
// into the fold by web/js/reducer.js). Pure: no DOM, tested in tests/js/plans.test.mjs.

import { updateMessage } from "./chat-state.js";

export const MODES = Object.freeze([
  { value: "ask", label: "Ask", hint: "Each tool runs or asks as its approval settings say." },
  { value: "plan", label: "Plan", hint: "Only tools that change nothing: the model proposes a plan you can execute." },
  { value: "edit", label: "Edit", hint: "Changes to workspace files run without asking; commands ask." },
  { value: "auto", label: "Auto", hint: "As Edit, and commands run without asking inside the workspace; anything reaching outside it asks." },
]);

/** The mode `value` names (an unknown or missing one is Ask, the server's default). */
export function modeInfo(value) {
  return MODES.find((m) => m.value === value) || MODES[0];
}

export const STATUS_LABEL = Object.freeze({ pending: "to do", active: "in progress", done: "done" });

/** How far a plan is: counts by status, `finished` when every step is done, and a phrase. */
export function planProgress(plan) {
  const steps = Array.isArray(plan?.steps) ? plan.steps : [];
  const count = (status) => steps.filter((s) => s.status === status).length;
  const total = steps.length;
  const done = count("done");
  const active = count("active");
  const finished = total > 0 && done === total;
  const text = finished ? `All ${total} step${total === 1 ? "" : "s"} done`
    : `${done} of ${total} step${total === 1 ? "" : "s"} done`;
  return { total, done, active, pending: total - done - active, finished, text };
}

/** plan_id → the id of the newest message (last shown) carrying that plan: the card that is current. */
export function newestPlans(messages) {
  const out = new Map();
  for (const m of messages || []) if (m.plan?.plan_id) out.set(m.plan.plan_id, m.id);
  return out;
}

/**
 * Whether a card offers "Execute plan": it is its plan's newest card, no reply runs, and a
 * step is left to do (the server refuses a finished plan with `not_pending`).
 */
export function canExecute(plan, { newest, running }) {
  return !!newest && !running && plan?.steps?.length > 0 && !planProgress(plan).finished;
}

/** Two plans' steps are the same (text and status, in order). */
function sameSteps(a, b) {
  return JSON.stringify((a || []).map((s) => [s?.text, s?.status])) === JSON.stringify((b || []).map((s) => [s?.text, s?.status]));
}

/**
 * plan_id → its last execution on the branch: `{steps, messageId}` — the steps as they stood
 * when the person executed it (the user message's `executesPlan`), and that message's id.
 */
export function planExecutions(messages) {
  const out = new Map();
  for (const m of messages || []) {
    const p = m.role === "user" ? m.executesPlan : null;
    if (p?.plan_id) out.set(p.plan_id, { steps: p.steps || [], messageId: m.id });
  }
  return out;
}

/**
 * What a plan's card offers or says: `executable` (the "Execute plan" button) and `state` —
 * "executing" while the reply carrying it out runs, "executed" once it ran and the plan has
 * not changed since (or is all done), else "". A plan executed and then changed (the model
 * marked steps, or proposed it again differently) can be executed again; an unchanged one
 * cannot (the server refuses it with `not_pending` too).
 * @param opts {{newest, running, execution: {steps, messageId}|undefined, lastUserId}} —
 *   `lastUserId`: the id of the branch's last user message (the running reply's)
 */
export function planState(plan, { newest, running, execution, lastUserId }) {
  if (!newest) return { executable: false, state: "" };
  if (execution && running && execution.messageId === lastUserId) return { executable: false, state: "executing" };
  const unchanged = execution && sameSteps(execution.steps, plan?.steps);
  if (execution && (unchanged || planProgress(plan).finished)) return { executable: false, state: "executed" };
  return { executable: canExecute(plan, { newest, running }) && !unchanged, state: "" };
}

export const planEvents = {
  /**
   * update_plan made or changed a plan (CONTRACT §7): the message whose step called it
   * carries the plan as it now stands (`plan`, the shape GET …/messages gives).
   */
  plan(state, e) {
    const plan = { plan_id: e.plan_id, steps: (e.steps || []).map((s) => ({ text: s.text, status: s.status })) };
    const id = e.message_id ?? [...state.messages].reverse().find((m) => m.plan?.plan_id === e.plan_id)?.id;
    return updateMessage(state, id, (m) => (JSON.stringify(m.plan) === JSON.stringify(plan) ? m : { ...m, plan }));
  },
};
