// The documents a chat's turns write (CONTRACT §9, docs/PROTOCOL.md "Documents"): `doc_open`,
// `doc_delta` and `doc_update` folded into the state's `documents` (`documentEvents`, registered
// into the fold by web/js/reducer.js). Pure, no DOM (node-tested); the panel that shows them is
// web/app/views/doc-panel.js, which reads the rest (the list, versions, text) over HTTP.
//
// A document here is what this window heard of it:
//   {id, title, language, version, author, text, textVersion, callId, turnId, before, openedBy}
// `callId` is set while a call streams its text (`text` then grows with each delta; `turnId`
// is its turn); `openedBy` is the last call that opened it, kept after its stream (a stream
// can start and end between two frames: the panel still opens on it); `version` and `author` are of the newest `doc_update` heard (null: none yet);
// `text` is the text this window holds and `textVersion` the version it is (null while it
// streams, or when the window does not know the text: read it over HTTP; older than `version`
// when another version came since, e.g. the person's); `before` is the text
// a stream replaced, put back when the stream fails.
//
// A stream ends with its `doc_update` (the text is then that version's) or fails: its call's
// `tool_end` with ok false, its turn's end without either, a server restart, or a snapshot that
// no longer lists it. A failed stream's text goes; a document that had no saved text here
// before it (a create that failed, or an edit of a document read only over HTTP) leaves the
// slice, and the panel reads what is saved. Replays are dropped by the fold's positions
// (event_id) before they get here.

import { NEW_EPOCH } from "./chat-state.js";

export const documentSlices = { documents: [] };

const blank = (id) => ({ id, title: null, language: null, version: null, author: null, text: null, textVersion: null,
                         callId: null, turnId: null, before: null, openedBy: null });

function put(state, doc) {
  const i = state.documents.findIndex((d) => d.id === doc.id);
  if (i < 0) return { ...state, documents: [...state.documents, doc] };
  const documents = state.documents.slice();
  documents[i] = doc;
  return { ...state, documents };
}

/** The stream of `doc` ends without a version: its text goes back to what it was, or the entry goes. */
function fail(doc) {
  const before = doc.before;
  if (!before && doc.version == null) return null;
  return { ...doc, callId: null, turnId: null, before: null, text: before ? before.text : null,
           textVersion: before ? before.textVersion : null };
}

/** `fail` every stream `which(doc)` picks; the same state when none does. */
function failStreams(state, which) {
  if (!state.documents.some((d) => d.callId && which(d))) return state;
  const documents = [];
  for (const d of state.documents) {
    const next = d.callId && which(d) ? fail(d) : d;
    if (next) documents.push(next);
  }
  return { ...state, documents };
}

export const documentEvents = {
  doc_open(state, e) {
    if (typeof e.doc_id !== "string" || !e.doc_id) return state;
    const old = state.documents.find((d) => d.id === e.doc_id) || blank(e.doc_id);
    // A whole-text edit shows its text in place of the current one, kept to put back.
    const before = old.callId ? old.before : old.text != null ? { text: old.text, textVersion: old.textVersion } : null;
    return put(state, { ...old, title: e.title ?? old.title, language: e.language ?? old.language, text: "",
                        textVersion: null, callId: e.call_id ?? null, turnId: e.turn_id ?? null, before,
                        openedBy: e.call_id ?? old.openedBy });
  },

  doc_delta(state, e) {
    const old = state.documents.find((d) => d.id === e.doc_id);
    // A delta of a stream this window did not see open has nothing to add to.
    if (!old || !old.callId || (e.call_id != null && e.call_id !== old.callId) || !e.delta) return state;
    return put(state, { ...old, text: old.text + e.delta });
  },

  doc_update(state, e) {
    if (typeof e.doc_id !== "string" || !e.doc_id || !Number.isInteger(e.version)) return state;
    const old = state.documents.find((d) => d.id === e.doc_id) || blank(e.doc_id);
    const newer = old.version == null || e.version >= old.version;
    const ends = old.callId != null && e.call_id != null && e.call_id === old.callId;
    const doc = { ...old };
    if (newer) Object.assign(doc, { version: e.version, author: e.author ?? null });
    if (ends) Object.assign(doc, { callId: null, turnId: null, before: null, textVersion: e.version });
    return put(state, doc);
  },

  // A call that failed made no version: what it streamed goes.
  tool_end(state, e) {
    if (e.ok !== false || typeof e.call_id !== "string") return state;
    return failStreams(state, (d) => d.callId === e.call_id);
  },

  // Its turn ended with neither a doc_update nor a tool_end (stopped, failed).
  turn_end(state, e) {
    return failStreams(state, (d) => e.turn_id == null || d.turnId === e.turn_id);
  },

  // A resume far behind: the streams still being written are the snapshot's, with their text so far.
  snapshot(state, e) {
    const listed = new Map((Array.isArray(e.documents) ? e.documents : [])
      .filter((d) => d && typeof d.doc_id === "string" && typeof d.call_id === "string")
      .map((d) => [d.doc_id, d]));
    let next = failStreams(state, (d) => {
      const s = listed.get(d.id);
      return !s || s.call_id !== d.callId;
    });
    for (const s of listed.values()) {
      const old = next.documents.find((d) => d.id === s.doc_id);
      const text = typeof s.content === "string" ? s.content : "";
      if (old && old.callId === s.call_id && old.text === text) continue;
      const base = old || blank(s.doc_id);
      const before = base.callId ? base.before : base.text != null ? { text: base.text, textVersion: base.textVersion } : null;
      next = put(next, { ...base, title: s.title ?? base.title, language: s.language ?? base.language, text,
                         textVersion: null, callId: s.call_id, turnId: e.turn_id ?? base.turnId, before,
                         openedBy: s.call_id });
    }
    return next;
  },

  // The server restarted: a stream it was writing died with it.
  [NEW_EPOCH]: (state) => failStreams(state, () => true),
};

/** The document `id` as this window heard of it, or undefined. */
export function findDocument(state, id) {
  return state.documents.find((d) => d.id === id);
}

/**
 * The panel's tabs: the chat's documents as listed over HTTP (`listed`, oldest first), then those
 * heard of only by events (a document being created), each {id, title, language, extension?,
 * streaming, doc}. `doc` is the event entry (or null); a listed title and language give way to a
 * newer stream's.
 */
export function documentTabs(listed, documents) {
  const heard = new Map(documents.map((d) => [d.id, d]));
  const tabs = [];
  const seen = new Set();
  for (const item of listed || []) {
    const doc = heard.get(item.id) || null;
    seen.add(item.id);
    tabs.push({ id: item.id, title: doc?.callId && doc.title ? doc.title : item.title,
                language: doc?.callId && doc.language ? doc.language : item.language,
                extension: item.extension ?? null, streaming: !!doc?.callId, doc });
  }
  for (const doc of documents) {
    if (seen.has(doc.id) || !doc.title) continue;
    tabs.push({ id: doc.id, title: doc.title, language: doc.language || "text", extension: null,
                streaming: !!doc.callId, doc });
  }
  return tabs;
}
