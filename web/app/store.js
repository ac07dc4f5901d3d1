// The app's shared state and its one render loop. Anything that changes state
// calls schedule(); the views re-render at most once per animation frame, and
// when nothing changes no frame is requested at all (an idle page does no work).
import { applyChatFrame as listAfterFrame, appendPage } from "../js/chat-list.js";

export const app = {
  route: { name: "new" },
  chats: [],            // GET /api/chats items, newest activity first
  chatsCursor: null,
  chatsVersion: 0,      // bumped on every change, so the sidebar knows when to redraw
  folders: [],          // GET /api/folders items, by name
  foldersVersion: 0,
  draft: { folderId: null, temporary: false },  // how the next new chat starts (organise.js)
  providers: null,      // null until loaded
  models: [],
  settings: null,
  suggestions: null,    // POST /api/providers/suggestions, asked when needed
  session: null,        // the open ChatSession (chat-session.js), or null
  signedOut: false,     // a 401: the cookie no longer matches the running server
  theme: "system",
};

const renderers = [];
let frame = 0;

export function onRender(fn) { renderers.push(fn); }

export function schedule() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    for (const fn of renderers) fn();
  });
}

/**
 * Resolves once the next frame has been painted, or after PAINT_WAIT_MS when no frame
 * comes (a hidden window draws none): what can wait for the first paint waits here.
 */
export function afterPaint() {
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); resolve(); };
    const timer = setTimeout(done, PAINT_WAIT_MS);
    requestAnimationFrame(() => setTimeout(done, 0));
  });
}
const PAINT_WAIT_MS = 200;

export function setChats(items, cursor, append = false) {
  const next = append ? appendPage(app.chats, items) : items;
  // A refresh that changes nothing (the usual case on window focus) draws nothing.
  if ((cursor === undefined || cursor === app.chatsCursor) && JSON.stringify(next) === JSON.stringify(app.chats)) return;
  app.chats = next;
  if (cursor !== undefined) app.chatsCursor = cursor;
  app.chatsVersion += 1;
  schedule();
}

/** A /ws/_app frame (chat_changed / chat_removed) applied to the list; redraws only on a visible change. */
export function applyChatFrame(frame, openId) {
  const next = listAfterFrame(app.chats, frame, { openId, more: Boolean(app.chatsCursor) });
  if (next === app.chats) return;
  app.chats = next;
  app.chatsVersion += 1;
  schedule();
}

export function setFolders(items) {
  if (JSON.stringify(items) === JSON.stringify(app.folders)) return;
  app.folders = items;
  app.foldersVersion += 1;
  schedule();
}

export function patchChatInList(id, changes) {
  const i = app.chats.findIndex((c) => c.id === id);
  if (i < 0) return;
  // Unchanged values do not redraw the list (a redraw mid double-click would eat it).
  if (Object.entries(changes).every(([k, v]) => app.chats[i][k] === v)) return;
  app.chats = app.chats.slice();
  app.chats[i] = { ...app.chats[i], ...changes };
  app.chatsVersion += 1;
  schedule();
}

export function modelLabel(id) {
  if (!id) return "no model";
  const m = app.models.find((x) => x.id === id);
  return m ? m.label || m.api_model : id;
}
