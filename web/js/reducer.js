// The chat's client state as a pure fold over server events: (state, event) → state.
//
// No DOM, no I/O, no clock: the same function runs in the browser and under
// `node --test` against the fixtures the backend tests read too
// (tests/fixtures/events). Inputs are never mutated; an event that changes
// nothing returns the very same state object, so a view can skip re-rendering
// with one `===`.
//
// Positions: every server event but `pong` carries `event_id` (per chat,
// increasing) and `epoch` (per server start). The state remembers the last id
// it applied; an event at or below it in the same epoch was already applied
// and is dropped, which is what makes a replay after reconnect safe. The
// socket must therefore `resume` with `after_event_id: state.lastEventId`
// exactly: the server only merges text deltas above that cursor, so a merged
// event never holds text the state already has.
//
// Order: a chat is a tree (CONTRACT §5) and `messages` is the branch the window
// shows, root → leaf in parent order, then the queued messages. A message is not
// placed by its id: a queued message keeps its id when it joins the branch (its
// turn starts, or it steers a running one), so it may follow newer rows. New rows
// go to the end of the branch; history pages are merged by their overlap.
// `view` is another branch shown read-only while a reply runs on this one (the
// server refuses to switch then): events keep applying to `messages`.

const STREAMING = "streaming";

// turn_end status → the status a message still streaming ends with.
const END_STATUS = { completed: "complete", cancelled: "cancelled", failed: "error", limit: "error" };

// A message status in a snapshot → the turn status it implies.
const TURN_STATUS = { complete: "completed", cancelled: "cancelled", error: "failed", limit: "limit",
                      interrupted: "failed" };

export function initialState(chatId) {
  return {
    chatId,
    epoch: null,
    lastEventId: 0,
    messages: [],
    pending: [],
    turn: null,
    queue: [],
    approvals: [],
    // Questions of the running turn waiting for the person (`question`): {question_id, call_id,
    // items, timeout_s?}; each goes with its call's tool_end, or the turn's end.
    questions: [],
    // Queued messages that left the queue in its last change (kept for a `steered` that
    // follows, which moves one of them into the running turn).
    unqueued: [],
    title: null,
    notice: null,
    usage: null,
    hasMore: false,
    // Another branch shown read-only: {through, messages, hasMore} (showBranch).
    view: null,
    // The leaf another window made active (`active_changed`): the branch shown is stale.
    branchStale: null,
    // The branch's summary checkpoint (CONTRACT §6): {boundaryMessageId, summary, tokensBefore,
    // tokensAfter, createdAt}; `summary` is null until a /context read brings it (loadCompaction).
    compaction: null,
    // Older messages left out of the running (or last) turn's request (`context_trimmed`):
    // {turnId, userMessageId, messagesOmitted, tokensBefore, tokensAfter, notice}.
    trimmed: null,
    // A research turn's progress (`research_progress`, docs/PROTOCOL.md "Research"): {turnId,
    // userMessageId, phase, searches, found, read, query, url, title, notice}; kept after it ends.
    research: null,
  };
}

/** An optimistic user message, shown until the server's `accepted` names its row. */
export function localSend(state, requestId, content, attachments, { research = false } = {}) {
  if (state.pending.some((p) => p.requestId === requestId)) return state;
  const pending = attachments?.length ? { requestId, content, attachments } : { requestId, content };
  if (research) pending.research = true;
  return { ...state, pending: [...state.pending, pending] };
}

/**
 * Merge a page of GET /api/chats/{id}/messages (the branch root → leaf, then the
 * queued messages) into the branch shown: the newest page, or an older one.
 *
 * Rows the page lists take its order; rows it does not list keep their place beside
 * their neighbours (a reply written after the page was read, older pages). A message
 * this turn is writing keeps its live text (it is newer than the last flush the row
 * holds); any other row is the saved truth and replaces what the state had.
 */
export function loadHistory(state, items, hasMore) {
  const messages = mergeRows(state.messages, pageRows(state, items));
  return withMessages(state, messages, !!hasMore);
}

/**
 * An older page (`before=`): it goes above both the live branch and a branch viewed
 * read-only, which share everything above the version that was switched.
 */
export function loadEarlier(state, items, hasMore) {
  const next = loadHistory(state, items, hasMore);
  if (!state.view) return next;
  const rows = pageRows(state, items);
  return { ...next, view: { ...state.view, messages: attachToolResults(mergeRows(state.view.messages, rows)),
                            hasMore: !!hasMore } };
}

/**
 * The active branch changed (this window switched version, or another did: `active_changed`):
 * `items` is a page of the new branch ending at its leaf (`POST …/active`, or
 * `GET …/messages`). What the page starts below stays where it lies above it (the
 * ancestors the branches share, drawn already); everything else shown is replaced.
 * A branch viewed read-only is let go.
 */
export function replaceBranch(state, items, hasMore) {
  const base = state.view ? state.view.messages : state.messages;
  const rows = pageRows(state, items);
  const kept = above(base, rows);
  const messages = mergeRows(kept, rows);
  // Queued messages wait for the chat, whatever its branch.
  for (const m of state.messages) if (isQueued(m) && !messages.some((x) => x.id === m.id)) messages.push(m);
  return { ...withMessages(state, messages, kept.length ? state.hasMore : !!hasMore), view: null, branchStale: null };
}

/**
 * Show another branch read-only (a reply runs on the active one, so the server will
 * not switch): `items` is `GET …/messages?through=<throughId>`. The events go on
 * applying to the active branch, which shows again with showLive.
 */
export function showBranch(state, throughId, items, hasMore) {
  const base = state.view ? state.view.messages : state.messages;
  const rows = pageRows(state, items);
  const kept = above(base, rows);
  const messages = attachToolResults(mergeRows(kept, rows).filter((m) => !isQueued(m)));
  return { ...state, view: { through: throughId, messages,
                             hasMore: kept.length ? (state.view?.hasMore ?? state.hasMore) : !!hasMore } };
}

/** Back to the active branch (where the running reply is). */
export function showLive(state) {
  return state.view ? { ...state, view: null } : state;
}

/**
 * The checkpoint a `/context` read names (`compaction`, null when the branch has none): the
 * divider goes after its boundary message and opens its summary.
 */
export function loadCompaction(state, c) {
  const next = c && typeof c === "object" ? {
    boundaryMessageId: c.boundary_message_id ?? null, summary: typeof c.summary === "string" ? c.summary : "",
    tokensBefore: c.tokens_before ?? null, tokensAfter: c.tokens_after ?? null, createdAt: c.created_at ?? null,
  } : null;
  const old = state.compaction;
  if (old === next || (old && next && Object.keys(next).every((k) => old[k] === next[k]))) return state;
  return { ...state, compaction: next };
}

/** The messages the window shows: a branch viewed read-only, else the active one. */
export function shownMessages(state) {
  return state.view ? state.view.messages : state.messages;
}

/** Apply one server event. Returns `state` itself when the event changes nothing. */
export function applyEvent(state, event) {
  if (!event || typeof event !== "object") return state;
  const handler = HANDLERS[event.type];
  if (!handler) return state; // pong, and types this client does not know yet
  let next = state;
  if (event.epoch != null && event.epoch !== state.epoch) {
    next = newEpoch(state, event.epoch);
  } else if (Number.isInteger(event.event_id) && isSeen(state, event)) {
    return state;
  }
  if (Number.isInteger(event.event_id) && event.type !== "snapshot") {
    next = { ...next, lastEventId: event.event_id };
  }
  return handler(next, event);
}

function isSeen(state, event) {
  // A snapshot describes the state *at* its id, so an equal id is still news
  // (a fresh server answers a resume with a snapshot at id 0).
  if (event.type === "snapshot") return (event.last_event_id ?? event.event_id) < state.lastEventId;
  return event.event_id <= state.lastEventId;
}

// The server restarted: its ids start over, and whatever was streaming died with
// the old process (the new one marks such rows `interrupted` at start).
function newEpoch(state, epoch) {
  const next = { ...state, epoch, lastEventId: 0 };
  if (state.epoch == null) return next;
  next.messages = mapMessages(state.messages, (m) => (m.status === STREAMING ? { ...m, status: "interrupted" } : m));
  next.approvals = [];
  next.questions = [];
  if (turnRunning(state)) next.turn = { ...state.turn, status: "failed" };
  return next;
}

// --- event handlers: (state already positioned at the event, event) → state ------------

const HANDLERS = {
  accepted(state, e) {
    const pending = state.pending.find((p) => p.requestId === e.request_id);
    const status = e.queued ? "queued" : "complete";
    const old = findMessage(state, e.message_id);
    // A message that joined the branch never goes back to waiting (an `accepted` replayed
    // after a reload, history holding it started or steered).
    const message = old
      ? { ...old, status: old.status === "queued" ? status : old.status }
      : newMessage(e.message_id, "user", {
        content: pending ? pending.content : "",
        attachments: e.attachments ?? pending?.attachments ?? [],
        status,
        requestId: e.request_id,
        // Sent from another window: the text is not known here until loadHistory.
        placeholder: !pending,
        ...(e.steer ? { steer: true } : {}),
        ...(pending?.research ? { research: true } : {}),
        // The plan an execute_plan carries out, as it stood then (CONTRACT §7).
        ...(e.executes_plan ? { executesPlan: e.executes_plan } : {}),
      });
    return {
      ...upsertMessage(state, message),
      pending: pending ? state.pending.filter((p) => p !== pending) : state.pending,
    };
  },

  turn_start(state, e) {
    const cont = e.continue_message_id ?? null;
    let next = {
      ...state,
      turn: { id: e.turn_id, status: "running", userMessageId: e.user_message_id ?? null,
              messageId: cont, messageIds: [], modelId: null },
      approvals: [],
      questions: [],
      notice: null,
      usage: null,
      trimmed: null,
      research: null,
    };
    if (e.user_message_id != null) {
      // A queued message keeps its id as its turn starts: it joins the end of the branch.
      const m = findMessage(next, e.user_message_id);
      if (m && isQueued(m)) next = upsertMessage(next, { ...m, status: "complete" });
    }
    if (cont != null && !findMessage(next, cont)) {
      // A reply continued on a branch not shown (a reload replays the chat's last turn).
      next = { ...next, turn: { ...next.turn, elsewhere: true } };
    } else if (cont != null) {
      // The turn re-sends the saved text as its first deltas; start from empty.
      next = touchMessage(next, cont, e.turn_id);
    }
    return next;
  },

  content: (state, e) => appendText(state, e, "content"),
  reasoning: (state, e) => appendText(state, e, "reasoning"),

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
    return dropQuestion(dropApproval(next, e.call_id), e.call_id);
  },

  /**
   * The model asks the person (CONTRACT §7). A question is sent again, with a new id, to a
   * socket that resumes: one already shown stays as it is. One whose call has ended (its
   * tool_end came first) is no longer waiting.
   */
  question(state, e) {
    if (state.questions.some((q) => q.question_id === e.question_id)) return state;
    const owner = findCallOwner(state, e.call_id);
    if (owner?.toolCalls.find((c) => c.id === e.call_id)?.state === "done") return state;
    const q = { question_id: e.question_id, call_id: e.call_id, items: e.items || [] };
    if (Number.isInteger(e.timeout_s)) q.timeout_s = e.timeout_s;
    return { ...state, questions: [...state.questions, q] };
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

  research_progress(state, e) {
    // The newest phase and counts; what an event leaves out (the query, the page) stays as it was.
    const turn = state.turn && state.turn.id === e.turn_id ? state.turn : null;
    const prev = state.research && state.research.turnId === e.turn_id ? state.research : null;
    return { ...state, research: {
      turnId: e.turn_id ?? null, userMessageId: turn?.userMessageId ?? prev?.userMessageId ?? null,
      phase: e.phase, searches: e.searches ?? 0, found: e.found ?? 0, read: e.read ?? 0,
      query: e.query || prev?.query || "", url: e.url || prev?.url || "", title: e.title || prev?.title || "",
      notice: e.notice || prev?.notice || "",
    } };
  },

  message_saved(state, e) {
    // Tool result rows are shown through their call's tool_end; user rows through accepted.
    if (e.role !== "assistant") return state;
    if (!findMessage(state, e.message_id)) {
      const next = touchMessage(state, e.message_id, e.turn_id);
      return updateMessage(next, e.message_id, (m) => ({ ...m, saved: true }));
    }
    return updateMessage(state, e.message_id, (m) => (m.saved ? m : { ...m, saved: true }));
  },

  done(state, e) {
    return updateMessage(state, e.message_id, (m) => ({ ...m, status: "complete", saved: true }));
  },

  error(state, e) {
    if (e.code === "cancelled") {
      // Stop is what the person asked for: no error banner, the partial reply is kept.
      return mapTurnMessages(state, (m) => (m.status === STREAMING ? { ...m, status: "cancelled" } : m));
    }
    let next = { ...state, notice: { kind: "error", code: e.code, message: e.message, retryable: !!e.retryable } };
    if (e.code === "queue_full") {
      // The refused send is the oldest one not yet answered.
      const i = next.pending.findIndex((p) => !p.failed);
      if (i >= 0) next.pending = next.pending.map((p, j) => (j === i ? { ...p, failed: e.code } : p));
    }
    const turn = state.turn;
    if (turn && e.turn_id != null && e.turn_id === turn.id && turn.messageId != null) {
      next = updateMessage(next, turn.messageId, (m) => ({ ...m, error: { code: e.code, message: e.message } }));
    }
    return next;
  },

  turn_end(state, e) {
    const ended = END_STATUS[e.status] || "complete";
    let next = { ...state, approvals: state.approvals.length ? [] : state.approvals,
                 questions: state.questions.length ? [] : state.questions };
    if (state.turn && (state.turn.id === e.turn_id || e.turn_id == null)) {
      next.turn = { ...state.turn, status: e.status };
    } else {
      next.turn = { id: e.turn_id, status: e.status, userMessageId: null, messageId: null, messageIds: [],
                    modelId: null };
    }
    return { ...next, messages: mapMessages(next.messages, (m) => (m.status === STREAMING ? { ...m, status: ended } : m)) };
  },

  /**
   * A steering message joined the running turn: the queued row (`queued_id`, the same
   * id as `message_id`) moves to the end of the branch, after the step's tool results,
   * and the next step's reply follows it. The queue event that took it off usually
   * comes first. A row already on the branch (a replay over history) stays where it is.
   */
  steered(state, e) {
    const old = findMessage(state, e.queued_id) ?? state.unqueued.find((m) => m.id === e.queued_id);
    let next = {
      ...state,
      queue: state.queue.some((q) => q.message_id === e.queued_id)
        ? state.queue.filter((q) => q.message_id !== e.queued_id) : state.queue,
      unqueued: state.unqueued.some((m) => m.id === e.queued_id)
        ? state.unqueued.filter((m) => m.id !== e.queued_id) : state.unqueued,
    };
    if (state.turn && !state.turn.joined?.includes(e.message_id)) {
      next.turn = { ...state.turn, joined: [...(state.turn.joined || []), e.message_id] };
    }
    const known = findMessage(next, e.message_id);
    if (known && !isQueued(known)) return next;
    if (e.queued_id !== e.message_id) next = { ...next, messages: next.messages.filter((m) => m.id !== e.queued_id) };
    return upsertMessage(next, newMessage(e.message_id, "user", {
      ...(known || {}),
      content: e.content ?? old?.content ?? "",
      attachments: old?.attachments ?? [],
      status: "complete",
      requestId: old?.requestId ?? null,
      placeholder: false,
    }));
  },

  /**
   * `edit` or `regenerate` made a new version (CONTRACT §5): what the window shows from
   * the version it replaces on goes (queued messages excepted: they wait for the chat),
   * and the new one takes its place. Only the new message's `versions` change: the old
   * sibling is off screen now. Already shown (the turn re-sent over history after a
   * reload), it stays as it is.
   */
  branched(state, e) {
    const known = findMessage(state, e.message_id);
    const links = { parentId: e.parent_id ?? null, versions: e.versions ?? null };
    if (known && !isQueued(known)) return updateMessage(state, e.message_id, (m) => ({ ...m, ...links }));
    const branch = state.messages.filter((m) => !isQueued(m));
    let cut = e.parent_id == null ? 0 : branch.findIndex((m) => m.id === e.parent_id) + 1;
    if (cut === 0 && e.parent_id != null) {
      // The parent is above the page shown: the replaced version may still be on it.
      const i = branch.findIndex((m) => m.parentId === e.parent_id);
      cut = i >= 0 ? i : 0;
    }
    const message = newMessage(e.message_id, e.role || "user", {
      content: e.content ?? "", attachments: e.attachments ?? [], ...links,
      status: e.role === "assistant" ? STREAMING : "complete", placeholder: false,
      ...(e.model_id ? { modelId: e.model_id } : {}),
    });
    const messages = [...branch.slice(0, cut), message, ...state.messages.filter(isQueued)];
    // Nothing of the branch above it is shown: older pages now lead to the new version.
    return { ...state, messages, hasMore: cut === 0 && e.parent_id != null ? true : state.hasMore };
  },

  /** Another window switched branch: the one shown is stale unless it ends at that leaf. */
  active_changed(state, e) {
    const stale = lastOnBranch(state.messages)?.id === e.leaf_id ? null : e.leaf_id ?? null;
    return stale === state.branchStale ? state : { ...state, branchStale: stale };
  },

  /**
   * The turn summarized older messages before its first request: the divider goes after
   * the boundary at once; the summary's text comes with the next /context read.
   */
  compacted(state, e) {
    const old = state.compaction;
    const same = old?.boundaryMessageId === e.boundary_message_id;
    if (same && old.tokensBefore === e.tokens_before && old.tokensAfter === e.tokens_after) return state;
    return { ...state, compaction: { boundaryMessageId: e.boundary_message_id, summary: same ? old.summary : null,
                                     tokensBefore: e.tokens_before, tokensAfter: e.tokens_after,
                                     createdAt: same ? old.createdAt : null } };
  },

  /** Older messages were left out of a request of the turn (no summary): the turn says how many. */
  context_trimmed(state, e) {
    const turn = state.turn && state.turn.id === e.turn_id ? state.turn : null;
    return { ...state, trimmed: { turnId: e.turn_id ?? null, userMessageId: turn?.userMessageId ?? null,
                                  messagesOmitted: e.messages_omitted ?? 0, tokensBefore: e.tokens_before ?? null,
                                  tokensAfter: e.tokens_after ?? null, notice: e.notice || null } };
  },

  /**
   * update_plan made or changed a plan (CONTRACT §7): the message whose step called it
   * carries the plan as it now stands (`plan`, the shape GET …/messages gives).
   */
  plan(state, e) {
    const plan = { plan_id: e.plan_id, steps: (e.steps || []).map((s) => ({ text: s.text, status: s.status })) };
    const id = e.message_id ?? [...state.messages].reverse().find((m) => m.plan?.plan_id === e.plan_id)?.id;
    return updateMessage(state, id, (m) => (JSON.stringify(m.plan) === JSON.stringify(plan) ? m : { ...m, plan }));
  },

  /**
   * Sources a tool of the turn brought in (CONTRACT §8), numbered per turn: kept on the turn
   * and shown on its newest reply (`message.sources`, as GET …/messages gives them), one per n.
   */
  sources(state, e) {
    if (!state.turn || state.turn.id !== e.turn_id) return state;
    const items = (e.items || []).map((item) => ({ ...item, kind: e.kind }));
    const sources = mergeSources(state.turn.sources || [], items);
    if (sources === state.turn.sources) return state;
    const next = { ...state, turn: { ...state.turn, sources } };
    return updateMessage(next, state.turn.messageId, (m) => ({ ...m, sources }));
  },

  title_update: (state, e) => (state.title === e.title ? state : { ...state, title: e.title }),

  queue: (state, e) => setQueue(state, e.items || []),

  usage(state, e) {
    const { type, event_id, turn_id, epoch, ...usage } = e; // eslint-disable-line no-unused-vars
    return { ...state, usage };
  },

  fallback(state, e) {
    const next = { ...state, notice: { kind: "fallback", message: e.reason, from_model_id: e.from_model_id,
                                       to_model_id: e.to_model_id } };
    if (state.turn) next.turn = { ...state.turn, modelId: e.to_model_id };
    return next;
  },

  snapshot(state, e) {
    let next = { ...state, lastEventId: e.last_event_id ?? e.event_id ?? state.lastEventId };
    if (Array.isArray(e.queue)) next = setQueue(next, e.queue);
    const status = e.status === "limit" ? "error" : e.status;
    if (e.turn_id != null) {
      const same = state.turn && state.turn.id === e.turn_id;
      next.turn = {
        id: e.turn_id,
        status: status === STREAMING ? "running" : TURN_STATUS[status] || "completed",
        userMessageId: same ? state.turn.userMessageId : null,
        messageId: e.message_id ?? null,
        messageIds: e.message_id != null ? [e.message_id] : [],
        modelId: same ? state.turn.modelId : null,
      };
      // The sources it gathered go on to its next reply (`sources`, touchMessage).
      const sources = mergeSources((same && state.turn.sources) || [], Array.isArray(e.sources) ? e.sources : []);
      if (sources.length) next.turn.sources = sources;
      if (e.research && typeof e.research === "object") {
        next = HANDLERS.research_progress(next, { ...e.research, turn_id: e.turn_id });
      }
    } else if (turnRunning(state)) {
      // Nothing is retained: the turn we were following ended while we were away.
      next.turn = { ...state.turn, status: TURN_STATUS[status] || "completed" };
    }
    if (status !== STREAMING && next.approvals.length) next.approvals = [];
    if (status !== STREAMING && next.questions.length) next.questions = [];
    if (e.message_id == null) return next;
    const old = findMessage(next, e.message_id);
    const done = status !== STREAMING;
    // A finished reply the history read does not hold is on another branch (a stored
    // snapshot names the chat's newest reply on any branch) or came while this window was
    // away, and then that history is read again (chat-session.js); a running reply is on
    // the active branch, the one shown.
    if (!old && done && next.messages.length) return next;
    const calls = (e.tool_calls || []).map((c) => {
      const known = old?.toolCalls.find((k) => k.id === c.id);
      return known ? { ...known, name: c.name, arguments: known.edited ? known.arguments : c.arguments }
        : toolCall(c.id, c.name, c.arguments, done ? "done" : "running");
    });
    const message = {
      ...(old || newMessage(e.message_id, "assistant", { modelId: next.turn?.modelId ?? null })),
      content: e.content ?? "", reasoning: e.reasoning ?? "", toolCalls: calls, status,
    };
    const sources = e.turn_id != null ? next.turn.sources : Array.isArray(e.sources) ? e.sources : null;
    if (sources && sources.length) message.sources = mergeSources(message.sources || [], sources);
    return upsertMessage(next, message);
  },
};

// --- helpers ---------------------------------------------------------------------------

function turnRunning(state) {
  return !!state.turn && state.turn.status === "running";
}

function newMessage(id, role, fields = {}) {
  return { id, role, content: "", reasoning: "", toolCalls: [], toolCallId: null, status: STREAMING,
           modelId: null, usage: null, error: null, ...fields };
}

function toolCall(id, name, args, state) {
  return { id, name, arguments: args, state, ok: null, output: null, durationMs: null };
}

function fromRow(item, old) {
  const calls = (item.tool_calls || []).map((c) => {
    const known = old?.toolCalls?.find((k) => k.id === c.id);
    // A saved step holds the model's arguments; a call that ran edited keeps what ran.
    return known ? { ...known, name: c.name, arguments: known.edited ? known.arguments : c.arguments }
      : toolCall(c.id, c.name, c.arguments ?? "", item.status === STREAMING ? "running" : "done");
  });
  const row = {
    ...(old || {}),
    id: item.id, role: item.role, content: item.content ?? "", reasoning: item.reasoning ?? "",
    toolCalls: calls, toolCallId: item.tool_call_id ?? null, status: item.status,
    modelId: item.model_id ?? null, usage: item.usage ?? null, error: item.error ?? null,
    requestId: item.request_id ?? null, attachments: item.attachments ?? [], saved: true, placeholder: false,
    parentId: item.parent_id !== undefined ? item.parent_id : old?.parentId ?? null,
    versions: item.versions ?? old?.versions ?? null,
    // The plan its step's update_plan call left (CONTRACT §7), else null.
    plan: item.plan ?? null,
    // The sources its text cites as [n] (CONTRACT §8).
    // A reply still being written has none saved yet: the ones its turn announced stay.
    sources: Array.isArray(item.sources) && item.sources.length ? item.sources : old?.sources ?? [],
    // A tool result that was an error (when the API says so: `tool_error`).
    ...(item.tool_error ? { toolError: true } : {}),
    // A file write's result: the change it made.
    ...(item.diff ? { diff: item.diff } : {}),
    // A question sent for a research turn.
    ...(item.research ? { research: true } : {}),
    // A user message that executed a plan: the plan as it stood then.
    ...(item.executes_plan ? { executesPlan: item.executes_plan } : {}),
  };
  // The same row read again is the same object: the view redraws nothing for it.
  return old && sameRow(old, row) ? old : row;
}

function sameRow(a, b) {
  for (const k in b) {
    const x = a[k], y = b[k];
    if (x === y) continue;
    if (!x || !y || typeof x !== "object" || typeof y !== "object" || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/** A row the running turn writes, with the tree links its page gives it. */
function withLinks(old, item) {
  const parentId = item.parent_id !== undefined ? item.parent_id : old.parentId ?? null;
  const versions = item.versions ?? old.versions ?? null;
  if (parentId === old.parentId && JSON.stringify(versions) === JSON.stringify(old.versions ?? null)) return old;
  return { ...old, parentId, versions };
}

const isQueued = (m) => m.status === "queued";

function lastOnBranch(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (!isQueued(messages[i])) return messages[i];
  return undefined;
}

/** A page's items as rows, each built on what the state knows of it (either branch). */
function pageRows(state, items) {
  const known = new Map();
  if (state.view) for (const m of state.view.messages) known.set(m.id, m);
  for (const m of state.messages) known.set(m.id, m);
  const live = new Set(turnRunning(state) ? state.turn.messageIds : []);
  return (items || []).map((item) => {
    const old = known.get(item.id);
    if (old && live.has(item.id)) return withLinks(old, item);
    // A page read before a queued message joined the branch (its turn, or a steer) still lists it queued.
    if (old && item.status === "queued" && !isQueued(old)) return old;
    return fromRow(item, old);
  });
}

/** `shown` (a branch, then queued rows) with a page's `rows` merged in (see loadHistory). */
function mergeRows(shown, rows) {
  const inPage = new Set(rows.map((m) => m.id));
  const branch = interleave(shown.filter((m) => !isQueued(m)), rows.filter((m) => !isQueued(m)), inPage);
  const onBranch = new Set(branch.map((m) => m.id));
  const queued = [...rows.filter(isQueued), ...shown.filter((m) => isQueued(m) && !inPage.has(m.id))]
    .filter((m) => !onBranch.has(m.id)).sort(compareIds);
  return queued.length ? [...branch, ...queued] : branch;
}

/**
 * The page's rows in its order, each row of `old` it does not list after the row it
 * followed. With no row in common the page goes above (an older page) or below.
 */
function interleave(old, page, inPage) {
  if (!old.length) return page;
  if (!page.length) return old;
  const pos = new Map(old.map((m, i) => [m.id, i]));
  const common = page.find((m) => pos.has(m.id));
  if (!common) return pageAbove(old, page) ? [...page, ...old] : [...old, ...page];
  const out = [];
  let next = 0; // the first row of `old` not placed yet
  // What `old` has above the first row in common is above the whole page (a page is one
  // run of the branch).
  for (const end = pos.get(common.id); next < end; next++) if (!inPage.has(old[next].id)) out.push(old[next]);
  for (const m of page) {
    const p = pos.get(m.id);
    if (p !== undefined && p >= next) {
      for (; next < p; next++) if (!inPage.has(old[next].id)) out.push(old[next]);
      next = p + 1;
    }
    out.push(m);
  }
  for (; next < old.length; next++) if (!inPage.has(old[next].id)) out.push(old[next]);
  return out;
}

function pageAbove(old, page) {
  const first = old[0];
  const last = page[page.length - 1];
  if (first.parentId != null) return first.parentId === last.id;
  if (page[0].parentId != null && page[0].parentId === old[old.length - 1].id) return false;
  // Rows without links (events not yet read back): one branch's pages follow in id order.
  return Number(last.id) < Number(first.id);
}

/**
 * The rows of `shown`'s branch above where a page of a branch begins: the page's first
 * row is one of them (all above it stay), or its parent is (it and all above stay).
 */
function above(shown, rows) {
  const branch = shown.filter((m) => !isQueued(m));
  const top = rows.find((m) => !isQueued(m));
  if (!top) return [];
  let i = branch.findIndex((m) => m.id === top.id);
  if (i >= 0) return branch.slice(0, i);
  if (top.parentId == null) return [];
  i = branch.findIndex((m) => m.id === top.parentId);
  return i >= 0 ? branch.slice(0, i + 1) : [];
}

function withMessages(state, messages, hasMore) {
  const all = attachToolResults(messages);
  const requestIds = new Set(all.map((m) => m.requestId).filter(Boolean));
  const pending = state.pending.filter((p) => !requestIds.has(p.requestId));
  return { ...state, messages: all, pending: pending.length === state.pending.length ? state.pending : pending, hasMore };
}

// A tool result whose arguments the person edited opens with this line (backend/core/agent.py).
const EDITED_NOTE = /^\[The person edited the arguments before allowing this call; it ran with: (.*)\]\n/;

// History lists tool results as their own rows: show each on its call, with the
// arguments that ran when the person edited them.
function attachToolResults(messages) {
  const results = new Map();
  for (const m of messages) if (m.role === "tool" && m.toolCallId) results.set(m.toolCallId, m);
  if (!results.size) return messages;
  return messages.map((m) => {
    if (!m.toolCalls?.some((c) => results.has(c.id) && c.output == null)) return m;
    return { ...m, toolCalls: m.toolCalls.map((c) => {
      const r = results.get(c.id);
      if (!r || c.output != null) return c;
      const note = typeof r.content === "string" ? EDITED_NOTE.exec(r.content) : null;
      const diff = r.diff ? { diff: r.diff } : {};
      if (note) {
        return { ...c, state: "done", output: r.content.slice(note[0].length), ok: c.ok ?? !(r.error || r.toolError),
                 arguments: note[1], edited: true, ...diff };
      }
      return { ...c, state: "done", output: r.content, ok: c.ok ?? !(r.error || r.toolError), ...diff };
    }) };
  });
}

function compareIds(a, b) {
  const x = Number(a.id), y = Number(b.id);
  if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
  return String(a.id).localeCompare(String(b.id));
}

function findMessage(state, id) {
  return id == null ? undefined : state.messages.find((m) => m.id === id);
}

function findCallOwner(state, callId) {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i];
    if (m.toolCalls.some((c) => c.id === callId)) return m;
  }
  return undefined;
}

function mapMessages(messages, fn) {
  let changed = false;
  const out = messages.map((m) => {
    const n = fn(m);
    if (n !== m) changed = true;
    return n;
  });
  return changed ? out : messages;
}

function mapTurnMessages(state, fn) {
  const ids = new Set(state.turn ? state.turn.messageIds : []);
  const messages = mapMessages(state.messages, (m) => (ids.has(m.id) || m.status === STREAMING ? fn(m) : m));
  return messages === state.messages ? state : { ...state, messages };
}

function updateMessage(state, id, fn) {
  const messages = mapMessages(state.messages, (m) => (m.id === id ? fn(m) : m));
  return messages === state.messages ? state : { ...state, messages };
}

/**
 * Put `message` in: over its row, else where it belongs — queued messages at the end,
 * others at the end of the branch. A queued row that joins the branch moves there.
 */
function upsertMessage(state, message) {
  const i = state.messages.findIndex((m) => m.id === message.id);
  if (i >= 0 && !(isQueued(state.messages[i]) && !isQueued(message))) {
    const messages = state.messages.slice();
    messages[i] = message;
    return { ...state, messages };
  }
  const rest = i >= 0 ? state.messages.filter((m) => m.id !== message.id) : state.messages;
  if (isQueued(message)) return { ...state, messages: [...rest, message] };
  const at = rest.findIndex(isQueued);
  const messages = at < 0 ? [...rest, message] : [...rest.slice(0, at), message, ...rest.slice(at)];
  return { ...state, messages };
}

/**
 * Make sure assistant message `id` exists and belongs to the running turn.
 *
 * The first event of a turn for a message starts its text over: the turn's
 * deltas add up to the whole message (a `continue` re-sends the saved text,
 * and a replay from the turn's start re-sends everything), so text that came
 * from history must not be appended to. A new message of the turn also means
 * the step before it was saved complete.
 */
function touchMessage(state, id, turnId) {
  if (id == null) return state;
  const turn = state.turn;
  const ours = turn && turn.id === turnId && turnId != null;
  if (ours && turn.messageIds.includes(id)) return state;
  if (ours && !findMessage(state, id) && !turnOwnsLeaf(state)) return state;
  let next = state;
  // The turn's sources go with its newest reply: the final one saves them (CONTRACT §8).
  const sources = ours && turn.sources?.length ? { sources: turn.sources } : {};
  if (ours) {
    next = { ...next, turn: { ...turn, messageId: id, messageIds: [...turn.messageIds, id] } };
    next = updateMessage(next, turn.messageId, (m) => {
      if (m.id === id) return m;
      let left = m;
      if (sources.sources && "sources" in m) {
        left = { ...m };
        delete left.sources;
      }
      return left.status === STREAMING ? { ...left, status: "complete" } : left;
    });
  }
  const old = findMessage(next, id);
  if (!old) {
    return upsertMessage(next, newMessage(id, "assistant", { modelId: turn?.modelId ?? null, ...sources }));
  }
  if (!ours) return next;
  // Text it already had (history, or a reply being continued) is being sent again:
  // `replayed` tells the view this is not a reply it watched from its start.
  return updateMessage(next, id, (m) => ({ ...m, content: "", reasoning: "", status: STREAMING, error: null,
    replayed: m.replayed || m.status === "complete" || !!m.content || !!m.reasoning, ...sources }));
}

/** `items` added to `list` where their number is new; `list` itself when none is. */
function mergeSources(list, items) {
  const known = new Set(list.map((s) => s.n));
  const added = items.filter((s) => Number.isInteger(s.n) && !known.has(s.n) && known.add(s.n));
  return added.length ? [...list, ...added].sort((a, b) => a.n - b.n) : list;
}

/**
 * Whether a new reply of the running turn goes at the end of the branch shown: the turn
 * wrote what ends it (its user message, a reply, a tool result of one, a message that
 * joined it). A reload replays the last turn even when its branch is not the active one
 * any more (switched since it ended): such a turn's replies are not the branch's.
 */
function turnOwnsLeaf(state) {
  const turn = state.turn;
  if (turn.elsewhere) return false;
  const leaf = lastOnBranch(state.messages);
  if (!leaf || leaf.id === turn.userMessageId || turn.messageIds.includes(leaf.id) || turn.joined?.includes(leaf.id)) {
    return true;
  }
  if (leaf.role === "tool") {
    const owner = findCallOwner(state, leaf.toolCallId);
    if (owner && turn.messageIds.includes(owner.id)) return true;
  }
  // A turn without a user message answers the branch as it stands (after tool results, a cut-off reply).
  return turn.userMessageId == null && !turn.messageIds.length && leaf.role !== "user";
}

function appendText(state, e, field) {
  if (!e.delta && findMessage(state, e.message_id)) return state;
  const next = touchMessage(state, e.message_id, e.turn_id);
  const id = e.message_id ?? next.turn?.messageId;
  if (id == null) return next;
  return updateMessage(next, id, (m) => ({ ...m, [field]: m[field] + (e.delta || "") }));
}

function upsertToolCall(state, messageId, callId, fn) {
  return updateMessage(state, messageId, (m) => {
    const i = m.toolCalls.findIndex((c) => c.id === callId);
    const call = fn(i >= 0 ? m.toolCalls[i] : undefined);
    if (i >= 0 && call === m.toolCalls[i]) return m;
    const toolCalls = m.toolCalls.slice();
    if (i >= 0) toolCalls[i] = call;
    else toolCalls.push(call);
    return { ...m, toolCalls };
  });
}

function dropApproval(state, callId) {
  if (!state.approvals.some((a) => a.call_id === callId)) return state;
  return { ...state, approvals: state.approvals.filter((a) => a.call_id !== callId) };
}

function dropQuestion(state, callId) {
  if (!state.questions.some((q) => q.call_id === callId)) return state;
  return { ...state, questions: state.questions.filter((q) => q.call_id !== callId) };
}

/**
 * Replace the queue. A queued user message that left it was discarded — except,
 * between turns, the oldest one: it is the message whose turn starts next.
 */
function setQueue(state, items) {
  // A replayed queue may still list a message history shows on the branch (started or steered).
  const started = new Set(state.messages.filter((m) => !isQueued(m)).map((m) => m.id));
  const queue = items.filter((i) => !started.has(i.message_id))
    .map((i) => ({ message_id: i.message_id, preview: i.preview, steer: !!i.steer }));
  const listed = new Set(queue.map((q) => q.message_id));
  const gone = state.messages.filter((m) => m.role === "user" && m.status === "queued" && !listed.has(m.id));
  const starting = !turnRunning(state) && gone.length ? gone[0].id : undefined;
  const drop = new Set(gone.map((m) => m.id).filter((id) => id !== starting));
  if (!drop.size) return { ...state, queue };
  // A steering message leaves the queue just before its `steered`: keep what it was
  // (request id, files) until then. Only the last change's are kept.
  return { ...state, queue, messages: state.messages.filter((m) => !drop.has(m.id)),
           unqueued: gone.filter((m) => drop.has(m.id)) };
}
