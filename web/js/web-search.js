// The web search service as settings describe it (CONTRACT §8 `settings.web_search`):
// the services to choose from and, in words, whether models can search now. Pure, no
// DOM (node-tested); Settings → Web search (views/web-search-settings.js) and the new
// chat's hint (views/chat.js) say it.

/** The services, in the order offered; `key`: whether it needs an API key. */
export const BACKENDS = [
  { value: "searxng", label: "SearXNG", long: "SearXNG (your own instance)", key: false },
  { value: "brave", label: "Brave Search", long: "Brave Search API", key: true },
  { value: "tavily", label: "Tavily", long: "Tavily", key: true },
];

/** The service named `value`, or null (none, or one this page does not know). */
export function backendInfo(value) {
  return BACKENDS.find((b) => b.value === value) || null;
}

/**
 * What settings.web_search means for a chat: {on, sentence, todo}. `on` when a service is
 * set and has what it needs; `sentence` says so, or what is missing; `todo` what to do about
 * it in Settings → Web search, or "". The server's own sentence for a backend it cannot use
 * (`problem`) is used as it stands, and already says what to do.
 */
export function searchState(ws) {
  const info = backendInfo(ws?.backend);
  if (!info) {
    return { on: false, sentence: "Web search is off: models cannot look anything up.",
             todo: "Choose a search service" };
  }
  if (info.key && !ws.has_key) {
    const said = typeof ws.problem === "string" ? ws.problem.trim() : "";
    if (said) return { on: false, sentence: said, todo: "" };
    return { on: false, sentence: `${info.label} needs its API key: web search is off until it is set.`,
             todo: `Set the ${info.label} key` };
  }
  return { on: true, sentence: `Models that use tools can search the web with ${info.label} and cite what they find.`,
           todo: "" };
}
