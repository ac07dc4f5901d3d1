// A reply's tool calls (preparing, running, their progress, their end) and the approvals
// they wait for (`approval_required`, answered by the person's decision). Registered into
// the fold by web/js/reducer.js; the rows and cards are web/app/views/tool-call.js and
// approval.js.

import { STREAMING, NEW_EPOCH, findMessage, findCallOwner, touchMessage, updateMessage, upsertToolCall, toolCall }
  from "./chat-state.js";

// The state's slice: the running turn's calls waiting for the person's decision.
export const toolSlices = { approvals: [] };

const noApprovals = (state) => (state.approvals.length ? { ...state, approvals: [] } : state);

export const toolEvents = {
  tool_preparing(state, e) {
    const next = touchMessage(state, e.message_id, e.turn_id);
    return upsertToolCall(next, e.message_id, e.call_id, (c) => c || toolCall(e.call_id, e.name, "", "preparing"));
  },

  tool_start(state, e) {
    let next = state;
    const owner = e.message_id ?? findCallOwner(state, e.call_id)?.id ?? state.turn?.messageId;
    if (owner != null) {
      next = touchMessage(next, owner, e.turn_id);
      // Tools run only after their step was saved complete.
      next = updateMessage(next, owner, (m) => (m.status === STREAMING ? { ...m, status: "complete" } : m));
      next = upsertToolCall(next, owner, e.call_id, (c) => {
        // The arguments that run: the person may have edited them when approving.
        const args = e.arguments ?? c?.arguments ?? "";
        const edited = !!c?.edited || (!!c?.arguments && e.arguments != null && c.arguments !== e.arguments);
        return { ...(c || toolCall(e.call_id, e.name, "", "running")), name: e.name, arguments: args, state: "running",
                 ...(edited ? { edited: true } : {}) };
      });
    }
    return dropApproval(next, e.call_id);
  },

  tool_end(state, e) {
    let next = state;
    const owner = findCallOwner(state, e.call_id)?.id ?? state.turn?.messageId;
    if (owner != null && findMessage(state, owner)) {
      // A call that ends without having started (denied, or stopped by the loop guard) was
      // saved with its step all the same.
      next = updateMessage(next, owner, (m) => (m.status === STREAMING ? { ...m, status: "complete" } : m));
      next = upsertToolCall(next, owner, e.call_id, (c) => {
        // Its progress is over; a file write brings the change it made.
        const { progress, ...call } = c || toolCall(e.call_id, e.name, "", "done");
        return { ...call, state: "done", ok: e.ok ?? null, output: e.output ?? null, durationMs: e.duration_ms ?? null,
                 ...(e.diff ? { diff: e.diff } : {}) };
      });
    }
    return dropApproval(next, e.call_id);
  },

  approval_required(state, e) {
    let next = state;
    if (!state.approvals.some((a) => a.approval_id === e.approval_id)) {
      // can_always false: "allow always" would leave no rule (a chained shell command).
      // changed: an MCP tool whose name, description or schema changed since it was last
      // allowed (or never allowed); `description` is what it says now.
      const a = { approval_id: e.approval_id, call_id: e.call_id, name: e.name, arguments: e.arguments,
                  can_always: e.can_always !== false };
      if (e.changed) Object.assign(a, { changed: true, description: e.description ?? "" });
      if (e.diff) a.diff = e.diff; // what a file write will change
      // outbound: the conversation read private content and this call sends text off the
      // machine; `sends` is that text, `reason` the server's sentence saying so.
      if (e.outbound) a.outbound = { sends: String(e.outbound.sends ?? ""), reason: String(e.outbound.reason ?? "") };
      // local: a fetch of an address on the person's own computer or network.
      if (e.local) a.local = { url: String(e.local.url ?? ""), reason: String(e.local.reason ?? "") };
      next = { ...state, approvals: [...state.approvals, a] };
    }
    const owner = findCallOwner(next, e.call_id);
    if (owner) next = upsertToolCall(next, owner.id, e.call_id, (c) => ({ ...c, arguments: e.arguments }));
    return next;
  },

  tool_progress(state, e) {
    // The newest report of a running call; one that ran out behind its tool_end changes nothing.
    const owner = findCallOwner(state, e.call_id);
    const call = owner?.toolCalls.find((c) => c.id === e.call_id);
    if (!call || call.state === "done") return state;
    const progress = { elapsedMs: e.elapsed_ms ?? 0, output: e.output ?? "", progress: e.progress ?? null,
                       total: e.total ?? null, message: e.message ?? "" };
    return upsertToolCall(state, owner.id, e.call_id, (c) => ({ ...c, progress }));
  },

  // A new turn, the turn's end, a snapshot of a turn that no longer runs, a server
  // restart: nothing waits for a decision any more.
  turn_start: noApprovals,
  turn_end: noApprovals,
  snapshot: (state, e) => (e.status === STREAMING ? state : noApprovals(state)),
  [NEW_EPOCH]: noApprovals,
};

function dropApproval(state, callId) {
  if (!state.approvals.some((a) => a.call_id === callId)) return state;
  return { ...state, approvals: state.approvals.filter((a) => a.call_id !== callId) };
}
