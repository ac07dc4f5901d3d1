// A chat's history as the window shows it: pages of GET /api/chats/{id}/messages merged into
// the branch shown, switching branch (a version chosen here or in another window), and a
// branch looked at read-only while a reply runs on the active one. Pure functions over
// message pages, branches and versions (CONTRACT §5); the versions' events (`branched`,
// `active_changed`) are here too and go into the fold (web/js/reducer.js) as `historyEvents`.
//
// Order: a chat is a tree and `messages` is the branch the window shows, root → leaf in
// parent order, then the queued messages. A message is not placed by its id: a queued
// message keeps its id when it joins the branch (its turn starts, or it steers a running
// one), so it may follow newer rows. New rows go to the end of the branch; history pages
// are merged by their overlap. `view` is another branch shown read-only while a reply runs
// on this one (the server refuses to switch then): events keep applying to `messages`.

import { STREAMING, isQueued, lastOnBranch, turnRunning, findMessage, updateMessage, newMessage, toolCall }
  from "./chat-state.js";
import { rowImages } from "./images.js";

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

/** The messages the window shows: a branch viewed read-only, else the active one. */
export function shownMessages(state) {
  return state.view ? state.view.messages : state.messages;
}

// --- the versions' events ---------------------------------------------------------------

export const historyEvents = {
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
};

// The state's slices these pages and events keep: older rows to read, a branch looked at
// read-only ({through, messages, hasMore}: showBranch), and the leaf another window made
// active (`active_changed`: the branch shown is stale).
export const historySlices = { hasMore: false, view: null, branchStale: null };

// --- pages and branches ----------------------------------------------------------------

function fromRow(item, old) {
  const calls = (item.tool_calls || []).map((c) => {
    const known = old?.toolCalls?.find((k) => k.id === c.id);
    // A saved step holds the model's arguments; a call that ran edited keeps what ran.
    return known ? { ...known, name: c.name, arguments: known.edited ? known.arguments : c.arguments }
      : toolCall(c.id, c.name, c.arguments ?? "", item.status === STREAMING ? "running" : "done");
  });
  const images = rowImages(item);
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
    // The images its step drew (CONTRACT §13). A page read before one was kept lists none: the
    // ones its `image` events brought stay, as does a preview still drawing (web/js/images.js).
    ...(images.length ? { images } : {}),
    // A tool result that was an error (when the API says so: `tool_error`).
    ...(item.tool_error ? { toolError: true } : {}),
    // A file write's result: the change it made.
    ...(item.diff ? { diff: item.diff } : {}),
    // A question sent for a research turn.
    ...(item.research ? { research: true } : {}),
    // A message that asked a compare: its models (CONTRACT §10; its replies show as columns).
    ...(Array.isArray(item.compare) ? { compare: item.compare } : {}),
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
