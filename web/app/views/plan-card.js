// A plan card (CONTRACT §7): the steps of a plan the model proposed with update_plan, each
// with its status, under the message whose step made it. The plan's newest card offers
// "Execute plan" while no reply runs and a step is left: the chat switches to Edit and the
// model carries its plan out, marking the steps as it goes (the card follows live).
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
      onclick: () => { this.button.disabled = true; this.execute(this.plan.plan_id); } }, "Execute plan");
    this.el = h("section", { class: "plan-card" },
      h("header", { class: "plan-head" }, h("strong", {}, "Plan"), this.title), this.steps, this.button);
  }

  /** opts.executable: this is the plan's newest card, no reply runs, and a step is left. */
  update(plan, { executable }) {
    const key = JSON.stringify([plan, !!executable]);
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
    this.button.disabled = false;
  }
}
