// The first script the page runs: index.html loads it `async` and it imports nothing,
// so it runs as soon as it is read, while the app's modules are still loading. A chat
// named in the address is requested here at once, bodies and all; by the time the app
// can draw it, its history is in memory. main.js's graph imports this same module (one
// instance) and the chat session takes the answers (chat-session.js).

/** `#/c/<chat_id>`, the address of a chat (router.js reads the other routes). */
export const CHAT_ROUTE = /^\/c\/([^/?#]+)$/;

// Messages per history page. `?pagesize=N` (5–200) in the page address overrides it,
// so tests can page through a long chat without writing hundreds of rows.
export const PAGE = (() => {
  const n = Number(new URLSearchParams(location.search).get("pagesize"));
  return Number.isInteger(n) && n >= 5 && n <= 200 ? n : 50;
})();

/** The requests that read a chat and its newest page: [chat, messages] paths. */
export const chatPaths = (chatId) => [
  `/api/chats/${encodeURIComponent(chatId)}`,
  `/api/chats/${encodeURIComponent(chatId)}/messages?limit=${PAGE}`,
];

let early = null;
const m = location.hash.replace(/^#/, "").match(CHAT_ROUTE);
if (m) {
  const chatId = decodeURIComponent(m[1]);
  // Shaped as a fetch's answer for api.js's answer(), which reports failures.
  const read = (path) => fetch(path, { credentials: "same-origin" }).then(async (res) => {
    const body = await res.text();
    return { status: res.status, ok: res.ok, text: () => body };
  });
  early = { chatId, responses: chatPaths(chatId).map(read) };
  for (const r of early.responses) r.catch(() => {});
}

/** The reads made at start for `chatId` (once), or null. */
export function takeEarly(chatId) {
  const found = early?.chatId === chatId ? early.responses : null;
  early = null;
  return found;
}
