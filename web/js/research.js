// A research turn's progress (`research_progress`, docs/PROTOCOL.md "Research"): the newest
// phase and counts, kept after the turn ends. Registered into the fold by web/js/reducer.js;
// the strip that shows it is web/app/views/research-progress.js.

// The state's slice: {turnId, userMessageId, phase, searches, found, read, query, url, title,
// notice}, or null.
export const researchSlices = { research: null };

export const researchEvents = {
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

  // A snapshot of a research turn carries its progress so far.
  snapshot(state, e) {
    if (e.turn_id == null || !e.research || typeof e.research !== "object") return state;
    return researchEvents.research_progress(state, { ...e.research, turn_id: e.turn_id });
  },

  turn_start: (state) => (state.research ? { ...state, research: null } : state),
};
