// The first script the page runs. A classic script, loaded plainly at the top of
// index.html's head: the parser runs it the moment it is read, before the app's
// thirty-odd modules arrive and take the main thread for their own compiling (an
// `async` module waited behind them, and the history request with it: docs/BENCHMARKS.md).
// A chat named in the address is requested here at once, bodies and all;
// by the time the app can draw it, its history is in memory. It imports nothing and
// leaves one name, `numiEarly`, which router.js and chat-session.js read.
"use strict";

(() => {
  /** `#/c/<chat_id>`, the address of a chat (router.js reads the other routes). */
  const CHAT_ROUTE = /^\/c\/([^/?#]+)$/;

  // Messages per history page. `?pagesize=N` (5–200) in the page address overrides it,
  // so tests can page through a long chat without writing hundreds of rows.
  const n = Number(new URLSearchParams(location.search).get("pagesize"));
  const PAGE = Number.isInteger(n) && n >= 5 && n <= 200 ? n : 50;

  /** The requests that read a chat and its newest page: [chat, messages] paths. */
  const chatPaths = (chatId) => [
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
  function takeEarly(chatId) {
    const found = early?.chatId === chatId ? early.responses : null;
    early = null;
    return found;
  }

  self.numiEarly = Object.freeze({ CHAT_ROUTE, PAGE, chatPaths, takeEarly });
})();
