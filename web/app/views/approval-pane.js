// The chat's pane of tool calls waiting for the person's decision: one card per approval
// (views/approval.js) in a CardPane.
import { approvalCard } from "./approval.js";
import { CardPane } from "./card-pane.js";

export class ApprovalPane extends CardPane {
  /** @param answer (approvalId, decision, reason, args) → the decision sent */
  constructor(answer) {
    super("approvals", ({ state }) => state.approvals, (a) => a.approval_id, (a) => approvalCard(a, answer));
  }
}
