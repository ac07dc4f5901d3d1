// A plan card (CONTRACT §7): the steps of a plan the model proposed with update_plan, each
// with its status, under the message whose step made it. The plan's newest card offers
// "Execute plan" while no reply runs and a step is left: the chat switches to Edit and the
// model carries its plan out, marking the steps as it goes (the card follows live). Once
// pressed the card says "Executing…", then "Executed"; an unchanged plan is not offered again.
import { h } from "../dom.js";
import { STATUS_LABEL, planProgress } from "../../js/plans.js";

// Drawn as SVG icons (web/styles/app.css): an empty circle, a half-filled one, a check.
const MARK = { pending: "i-circle", active: "i-contrast", done: "i-check" };

export class PlanCard {
  /** @param execute (planId) => void */
  constructor(execute) {
    this.execute = execute;
    this.key = "";
    this.title = h("span", { class: "plan-progress" });
    this.steps = h("ol", { class: "plan-steps" });
    this.button = h("button", { type: "button", class: "primary plan-execute", hidden: true,
      title: "Switch this chat to Edit and let the model carry out its plan",
      onclick: () => this._press() }, "Execute plan");
    // What became of "Execute plan": Executing while its reply runs, then Executed.
    this.status = h("p", { class: "plan-status", role: "status", hidden: true });
    this.el = h("section", { class: "plan-card" },
      h("header", { class: "plan-head" }, h("strong", {}, "Plan"), this.title), this.steps, this.button, this.status);
  }

  /** Pressed: the button gives way to "Executing…" at once (a second press would be refused). */
  _press() {
    this.button.hidden = true;
    this._say("executing");
    this.execute(this.plan.plan_id);
  }

  _say(state) {
    this.status.hidden = !state;
    this.status.dataset.state = state || "";
    this.status.textContent = state === "executing" ? "Executing…" : state === "executed" ? "Executed" : "";
  }

  /** opts.executable: the card offers "Execute plan"; opts.state: "executing", "executed" or "". */
  update(plan, { executable, state = "" }) {
    const key = JSON.stringify([plan, !!executable, state]);
    if (key === this.key) return;
    this.key = key;
    this.plan = plan;
    const progress = planProgress(plan);
    this.title.textContent = progress.text;
    this.el.setAttribute("aria-label", `Plan: ${progress.text}`);
    this.el.dataset.finished = String(progress.finished);
    this.steps.replaceChildren(...(plan.steps || []).map((s) => h("li", { class: "plan-step", dataset: { status: s.status } },
      h("span", { class: `plan-mark i ${MARK[s.status] || MARK.pending}`, "aria-hidden": "true" }),
      h("span", { class: "plan-text" }, s.text),
      h("span", { class: "sr-only" }, ` (${STATUS_LABEL[s.status] || s.status})`))));
    this.button.hidden = !executable;
    this._say(executable ? "" : state);
  }
}
