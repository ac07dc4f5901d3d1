// Start-up and wiring: load what the views need, follow the route, connect the
// sidebar's and chat's actions to the API, and run the one render loop (store.js).
import { h } from "./dom.js";
import { get, post, patch, del, onApiError } from "./api.js";
import { app, schedule, onRender, setChats, patchChatInList, applyChatFrame, afterPaint } from "./store.js";
import { readIfOpen } from "../js/chat-list.js";
import { AppSocket } from "./app-socket.js";
import { parseRoute, onRoute, go, chatPath } from "./router.js";
import { loadMarkdown } from "./markdown-loader.js";
import { holdUntil } from "./render-queue.js";
import { reloadCatalog } from "./catalog.js";
import { apply as applyTheme, toggleTheme } from "./theme.js";
import { ChatSession } from "./chat-session.js";
import { Sidebar } from "./views/sidebar.js";
import { ChatView } from "./views/chat.js";
import { mountToasts, toast } from "./views/toast.js";
import { installShortcuts } from "./shortcuts.js";
import { organiseActions, refreshFolders } from "./organise.js";
import { ChatBanner } from "./views/chat-banner.js";
import { showSignedOut } from "./views/signed-out.js";
import { screens, warm } from "./lazy.js";

const root = document.getElementById("app");
const mainEl = h("main", { class: "main", id: "main" });
let view = null;          // the view shown in <main>
let firstSend = null;     // {chatId, text, research, compare}: a new chat's first message, sent once it opens
let jumpTo = null;        // {chatId, messageId}: a search result, shown once its chat opens
let banner = null;        // the strip under a chat view's header (views/chat-banner.js)

// -- chats list -----------------------------------------------------------------

let chatsLoading = null;
let chatsAgain = false;
let replay = null;  // app-socket frames that arrived while a list read was in flight
const openChatId = () => (app.route.name === "chat" ? app.route.chatId : null);

/** Reload the chat list; calls made while one is in flight collapse into one more. */
async function refreshChats() {
  if (chatsLoading) { chatsAgain = true; return chatsLoading; }
  chatsLoading = (async () => {
    try {
      do {
        chatsAgain = false;
        replay = [];
        const page = await get("/api/chats?limit=50");
        const missed = replay;
        setChats(page.items.map((c) => readIfOpen(c, openChatId())), page.next_cursor);
        // A frame that came during the read may be older or newer than its answer. Frames
        // arrive in the order the server read them, so applying them again on top ends
        // at the newest state either way (an older one is followed by its successor).
        for (const frame of missed) applyChatFrame(frame, openChatId());
      } while (chatsAgain);
    } catch { /* shown by onApiError */ } finally { chatsLoading = null; replay = null; }
  })();
  return chatsLoading;
}

/** A frame of /ws/_app: a chat's new state, a deleted chat, or "read the list again". */
function onAppFrame(frame) {
  view?.onAppFrame?.(frame); // the Trash and Archived views follow changes too
  if (frame.type === "folders_changed") { refreshFolders(); return; }
  if (frame.type === "resync") { refreshChats(); refreshFolders(); return; }
  replay?.push(frame);
  applyChatFrame(frame, openChatId());
  // The open chat's mode changed elsewhere (another window, or a plan being executed).
  const s = app.session;
  if (frame.type === "chat_changed" && s?.chat && s.chatId === frame.chat?.id && frame.chat.mode
      && frame.chat.mode !== s.chat.mode) s.setChat({ ...s.chat, mode: frame.chat.mode });
}

async function moreChats() {
  if (!app.chatsCursor) return;
  const page = await get(`/api/chats?limit=50&cursor=${encodeURIComponent(app.chatsCursor)}`);
  setChats(page.items, page.next_cursor, true);
}

// -- actions --------------------------------------------------------------------

const actions = {
  newChat() {
    closeSidebar();
    // A plain new chat: not in the folder or temporary as a previous draft may have been.
    const changed = actions.resetDraft();
    if (app.route.name !== "new") go("/");
    else if (changed) showNewChat();
    else view?.focus?.();
  },
  open(id) { go(chatPath(id)); },
  settings() { closeSidebar(); go("/settings"); },
  toggleTheme() { toggleTheme(); schedule(); },
  async help() { (await screens.dialogs()).openShortcuts(); },
  async search() {
    const { openSearch } = await screens.search();
    openSearch((item) => actions.openAt(item.chat_id, item.message_id));
  },

  /** Open a chat at one of its messages (a search result). */
  openAt(chatId, messageId) {
    closeSidebar();
    const s = app.session;
    if (s?.chatId === chatId && s.loaded && view instanceof ChatView) { view.reveal(messageId); return; }
    jumpTo = { chatId, messageId };
    go(chatPath(chatId));
  },
  more: moreChats,

  async rename(id, title) {
    try {
      const chat = await patch(`/api/chats/${encodeURIComponent(id)}`, { title });
      patchChatInList(id, { title: chat.title });
      const s = app.session;
      if (s?.chatId === id) { s.state = { ...s.state, title: chat.title }; s.setChat({ ...s.chat, title: chat.title }); }
    } catch (err) { toast(err.message); }
  },

  async pin(id, pinned) {
    try {
      await patch(`/api/chats/${encodeURIComponent(id)}`, { pinned });
      patchChatInList(id, { pinned });
    } catch (err) { toast(err.message); }
  },

  async remove(id, title) {
    const chat = app.chats.find((c) => c.id === id) || { title };
    try { await del(`/api/chats/${encodeURIComponent(id)}`); } catch (err) { toast(err.message); return; }
    const wasOpen = app.route.name === "chat" && app.route.chatId === id;
    setChats(app.chats.filter((c) => c.id !== id));
    if (wasOpen) go("/");
    toast(`Deleted “${chat?.title || "New chat"}”.`, {
      action: "Undo", ms: 8000,
      onAction: async () => {
        try {
          await post(`/api/chats/${encodeURIComponent(id)}/restore`);
          await refreshChats();
          if (wasOpen) go(chatPath(id));
        } catch (err) { toast(err.message); }
      },
    });
  },

  async createAndSend(text, { research = false, compare = null } = {}) {
    const body = {};
    if (view?.draftModel) body.model_id = view.draftModel;
    if (view?.draftMode) body.mode = view.draftMode;
    // In a folder, what is not given here comes from the folder's defaults (the server copies them).
    if (app.draft.folderId) body.folder_id = app.draft.folderId;
    if (app.draft.temporary) body.temporary = true;
    try {
      const chat = await post("/api/chats", body);
      firstSend = { chatId: chat.id, text, research, compare };
      actions.resetDraft();
      // Its app-socket frame may have come first. A temporary chat is in no list.
      if (!chat.temporary) setChats([chat, ...app.chats.filter((c) => c.id !== chat.id)]);
      go(chatPath(chat.id));
      return true;
    } catch (err) {
      toast(err.fields ? Object.values(err.fields).join(" ") : err.message, { ms: 8000 });
      return false;
    }
  },

  async setModel(chatId, modelId) {
    try {
      const chat = await patch(`/api/chats/${encodeURIComponent(chatId)}`, { model_id: modelId });
      if (app.session?.chatId === chatId) app.session.setChat(chat);
      patchChatInList(chatId, { model_id: chat.model_id });
    } catch (err) { toast(err.message); }
  },

  async openChatSettings() {
    const s = app.session;
    if (!s?.chat) return;
    const { openChatSettings } = await screens.dialogs();
    if (app.session === s) openChatSettings(s.chat, (chat) => s.setChat(chat));
  },
  /** The request the open chat's next turn would send, in a sheet ("Inspect request"). */
  async inspect() {
    const s = app.session;
    if (!s) return;
    const { openInspector } = await screens.inspector();
    if (app.session === s) openInspector(s.chatId);
  },
  closeSidebar() { closeSidebar(); },
  openSidebar() {
    root.classList.add("sidebar-open");
    drawerOpen(true);
    sidebar.el.querySelector("a, button")?.focus();
  },
};

Object.assign(actions, organiseActions({ showNewChat: () => showNewChat(), refreshChats }));

function closeSidebar() {
  if (!root.classList.contains("sidebar-open")) return;
  root.classList.remove("sidebar-open");
  drawerOpen(false);
}

/** The narrow-window drawer: while it is open the page behind it takes no focus. */
function drawerOpen(open) {
  mainEl.inert = open;
  for (const b of mainEl.querySelectorAll(".drawer-toggle")) b.setAttribute("aria-expanded", String(open));
  if (!open && (!document.activeElement || document.activeElement === document.body || sidebar.el.contains(document.activeElement))) {
    focusComposer();
  }
}

const sessionHooks = {
  onTitle: (id, title) => patchChatInList(id, { title }),
  onActivity: (id, running) => {
    patchChatInList(id, { running }); // its place in the list comes with the app socket's chat_changed
  },
  onGone: (id) => {
    toast("This chat was deleted.");
    setChats(app.chats.filter((c) => c.id !== id));
    if (app.route.chatId === id) go("/");
  },
};

// -- routing --------------------------------------------------------------------

function setView(next) {
  view?.leave?.(); // the chat left keeps its draft (views/chat.js)
  view = next;
  banner = next instanceof ChatView ? new ChatBanner(next, actions) : null;
  mainEl.replaceChildren(next.el);
  schedule();
}

/** A new, unsaved chat view. Started in a folder, it shows the model the folder gives. */
function newChatView() {
  const next = new ChatView(null, actions);
  const folder = app.folders.find((f) => f.id === app.draft.folderId);
  if (folder?.model_id && app.models.some((m) => m.id === folder.model_id)) next.draftModel = folder.model_id;
  return next;
}

/** Draw the new-chat view again (its folder changed), keeping what was typed. */
function showNewChat() {
  const typed = view instanceof ChatView && !view.session ? view.composer.input.value : "";
  setView(newChatView());
  if (typed) view.composer.input.value = typed;
  focusComposer();
}

/** A lazily loaded screen's module for `route`, or null: it failed, or the person moved on. */
async function screen(name, route) {
  try {
    const mod = await screens[name]();
    return app.route === route ? mod : null;
  } catch {
    toast("Part of Numi's window could not be loaded. Reload the window to try again.", { ms: 8000 });
    // Back to where the person was (its view was already let go), or to a new chat.
    if (app.route === route) history.length > 1 ? history.back() : go("/");
    return null;
  }
}

async function show(route) {
  app.route = route;
  closeSidebar();
  if (route.name !== "chat" || app.session?.chatId !== route.chatId) {
    app.session?.close();
    app.session = null;
  }
  if (route.name === "settings") {
    const mod = await screen("settings", route);
    if (mod) setView(new mod.SettingsView({ close: () => history.length > 1 ? history.back() : go("/") }));
  } else if (route.name === "trash" || route.name === "archive") {
    const mod = await screen(route.name, route);
    if (!mod) return;
    setView(route.name === "trash" ? new mod.TrashView(actions) : new mod.ArchiveView(actions));
    view.focus();
  } else if (route.name === "chat") {
    if (app.session) return schedule();
    const session = new ChatSession(route.chatId, sessionHooks);
    app.session = session;
    setView(new ChatView(session, actions));
    patchChatInList(route.chatId, { unread: false }); // opening the socket marks it read
    await session.open();
    if (firstSend?.chatId === route.chatId && app.session === session) {
      const { text, research, compare } = firstSend;
      firstSend = null;
      session.send(text, { research, compare });
    }
    // Focusing makes the browser work out the page's style on the spot: done here it
    // would hold back the history's first paint (open() has waited for it), and in the
    // next frame's callbacks that work is shared with the frame's own. Registered now,
    // it runs before any frame the socket's opening asks for.
    requestAnimationFrame(() => { if (app.session === session) focusComposer(); });
    if (jumpTo?.chatId === route.chatId && app.session === session) {
      const { messageId } = jumpTo;
      jumpTo = null;
      view.reveal(messageId);
    }
  } else if (app.providers && !app.providers.length) {
    const mod = await screen("firstRun", route);
    if (mod) setView(new mod.FirstRunView({ done: () => { setView(new ChatView(null, actions)); view.focus(); } }));
  } else {
    setView(newChatView());
    focusComposer();
  }
}

/** Put the cursor in the message box, unless the person is typing somewhere else (a rename). */
function focusComposer() {
  const el = document.activeElement;
  if (el && el !== document.body && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) && !el.classList.contains("composer-input")) return;
  view?.focus?.();
}

// -- start ----------------------------------------------------------------------

const sidebar = new Sidebar(actions);
onApiError((err) => {
  if (err.status === 401 && !app.signedOut) { app.signedOut = true; showSignedOut(root); }
});

onRender(() => {
  sidebar.render();
  view?.render();
  banner?.render();
});

// How long start-up waits for the app socket before reading the chat list anyway.
const LIST_WAIT_MS = 1500;

async function start() {
  applyTheme();
  root.replaceChildren(h("div", { class: "shell" }, sidebar.el, h("div", { class: "scrim", onclick: closeSidebar }), mainEl));
  mountToasts(document.body);
  installShortcuts(actions, () => app.session, () => view, sidebar);
  // Live markers for chats that are not open. The list is read once after each `ready`
  // (a change made while the socket was down would otherwise be missed) — and only
  // then: the first read waits for the first `ready`, so start-up reads it once, not
  // twice with a redraw in between. A socket that cannot connect soon does not hold
  // the list back; its later `ready` reads it again.
  let listRead = null;
  const readList = () => Promise.allSettled([refreshChats(), refreshFolders()]);
  let socketReady;
  const ready = new Promise((resolve) => { socketReady = resolve; });
  const listed = Promise.race([ready, new Promise((resolve) => setTimeout(resolve, LIST_WAIT_MS))])
    .then(() => (listRead ??= readList()));
  // A chat in the address opens at once (early.js has asked for it), alongside the
  // app's own data: its text shows as written until the Markdown module is in
  // (render-queue holds it).
  const first = parseRoute();
  onRoute(show);
  const shown = first.name === "chat" ? show(first) : null;
  // The app socket (and the list it has read) wait for that chat's first paint.
  Promise.resolve(shown).catch(() => {}).then(() => new AppSocket({
    onReady: () => {
      if (listRead) readList();
      else listRead = readList();
      socketReady();
    },
    onFrame: onAppFrame, shouldStop: () => app.signedOut,
  }));
  // Evaluating the Markdown libraries takes the main thread for a while: a chat opened
  // from the address is painted (as written) first, and formatted right after.
  const markdown = (shown ? shown.then(afterPaint) : Promise.resolve()).then(loadMarkdown);
  holdUntil(markdown);
  // History and the list are useful even when the catalog fails to load, so neither waits for the other.
  await Promise.allSettled([markdown, reloadCatalog(), listed]);
  // First run or a new chat: that depends on the providers, so it waits for them.
  await (shown ?? show(parseRoute()));
  // The screens left out of the start, loaded while nothing else is going on.
  if (window.requestIdleCallback) requestIdleCallback(warm, { timeout: 3000 });
  else setTimeout(warm, 50);
  // A window that slept may have missed frames without its socket noticing yet.
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshChats(); });
}

start();
