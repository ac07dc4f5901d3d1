// Organising chats: folders, moving, archiving, the trash and temporary chats. These are
// the actions behind the sidebar's folder groups and menus, the Archived and Trash views
// and the new-chat options; main.js merges them into the one `actions` object.
import { get, post, patch, del } from "./api.js";
import { app, schedule, setFolders, setChats, applyChatFrame } from "./store.js";
import { go, chatPath } from "./router.js";
import { toast } from "./views/toast.js";
import { screens } from "./lazy.js";

const confirm = async (what) => (await screens.folders()).confirmSheet(what);
const NO_DRAFT = Object.freeze({ folderId: null, temporary: false });
const enc = encodeURIComponent;

let foldersLoading = null;
let foldersAgain = false;

/** Read the folders again; calls made while one read is in flight collapse into one more. */
export async function refreshFolders() {
  if (foldersLoading) { foldersAgain = true; return foldersLoading; }
  foldersLoading = (async () => {
    try {
      do {
        foldersAgain = false;
        setFolders((await get("/api/folders")).items);
      } while (foldersAgain);
    } catch { /* shown by onApiError */ } finally { foldersLoading = null; }
  })();
  return foldersLoading;
}

/** The chat's row as the list holds it, else the open chat's. */
function chatOf(id) {
  return app.chats.find((c) => c.id === id) || (app.session?.chatId === id ? app.session.chat : null) || { id };
}

/** The open chat learns a change made elsewhere (a menu, a view) without reloading. */
function updateOpen(chat) {
  const s = app.session;
  if (s?.chatId === chat.id && s.chat) s.setChat({ ...s.chat, ...chat });
}

/** A chat's new row, applied as the app socket's frame would (which may also arrive). */
function listChanged(chat) {
  const { system_prompt: _p, params: _q, ...row } = chat; // the list's fields only, as frames carry
  applyChatFrame({ type: "chat_changed", chat: row }, app.route.name === "chat" ? app.route.chatId : null);
}

/** File a chat in a folder (null: out of any), from the Move sheet or a drop; the toast says where. */
async function fileIn(id, folderId, newName) {
  const updated = await patch(`/api/chats/${enc(id)}`, { folder_id: folderId });
  listChanged(updated);
  updateOpen(updated);
  const where = app.folders.find((f) => f.id === folderId)?.name || newName;
  toast(folderId ? `Moved to “${where}”.` : "Moved out of its folder.");
  refreshFolders(); // the counts
}

/**
 * @param hooks {{showNewChat(): void, refreshChats(): Promise}}
 *   showNewChat: draw the new-chat view again (the draft's folder decides its model)
 */
export function organiseActions(hooks) {
  const actions = {
    // -- folders ------------------------------------------------------------------
    async newFolder() {
      const { openFolderDialog } = await screens.folders();
      openFolderDialog(null, async (body) => {
        const folder = await post("/api/folders", body);
        await refreshFolders();
        toast(`Folder “${folder.name}” created.`);
      }, async (doc) => {
        const r = await post("/api/folders/import", doc);
        await refreshFolders();
        // What did not carry over (a model or a base this machine lacks) is said, not hidden.
        toast([`Folder “${r.folder.name}” imported.`, ...r.notes].join(" "), { ms: r.notes.length ? 12000 : 4000 });
      });
    },

    /** Download the folder's settings as a file to share (never its chats). */
    async exportFolder(id) {
      const { download } = await screens.dialogs();
      download(`/api/folders/${enc(id)}/export`);
    },

    async editFolder(id) {
      const folder = app.folders.find((f) => f.id === id);
      if (!folder) return;
      const { openFolderDialog } = await screens.folders();
      openFolderDialog(folder, async (body) => {
        await patch(`/api/folders/${enc(id)}`, body);
        await refreshFolders();
        // Its chats follow its tools list live: the open one's meter counts the new one.
        if (app.session?.chat?.folder_id === id) app.session.refreshContext();
        toast("Folder saved. New chats in it start with these settings.");
      });
    },

    async deleteFolder(id) {
      const folder = app.folders.find((f) => f.id === id);
      if (!folder) return;
      const n = folder.chat_count;
      const ok = await confirm({
        title: "Delete folder?",
        message: `“${folder.name}” will be deleted. ` + (n === 0 ? "There are no chats in it."
          : n === 1 ? "Its chat stays, outside any folder, with the settings it started with."
            : `Its ${n} chats stay, outside any folder, with the settings they started with.`),
        confirm: "Delete folder",
      });
      if (!ok) return;
      try {
        const r = await del(`/api/folders/${enc(id)}`);
        if (app.draft.folderId === id) app.draft = { ...app.draft, folderId: null };
        setChats(app.chats.map((c) => (c.folder_id === id ? { ...c, folder_id: null } : c)));
        await refreshFolders();
        toast(r.moved_chats ? `Folder deleted. ${r.moved_chats === 1 ? "Its chat is" : `Its ${r.moved_chats} chats are`} now outside any folder.` : "Folder deleted.");
      } catch (err) { toast(err.message); }
    },

    /** A new chat that will be made in this folder (with its model shown) when sent. */
    newChatInFolder(id) {
      app.draft = { folderId: id, temporary: false };
      if (app.route.name === "new") hooks.showNewChat();
      else go("/");
    },

    async moveChat(id) {
      const chat = chatOf(id);
      const { openMoveDialog } = await screens.folders();
      openMoveDialog(chat, async (folderId, newName) => {
        if (newName) {
          folderId = (await post("/api/folders", { name: newName })).id;
          refreshFolders();
        }
        await fileIn(id, folderId, newName);
      });
    },

    /** A chat dropped on a folder (null: on the chats outside any folder) is filed there. */
    async fileChat(id, folderId) {
      if ((chatOf(id).folder_id || null) === folderId) return;
      try { await fileIn(id, folderId); } catch (err) { toast(err.message); }
    },

    // -- archive --------------------------------------------------------------------
    async archive(id, archived = true) {
      const title = chatOf(id).title || "New chat";
      try {
        const chat = await patch(`/api/chats/${enc(id)}`, { archived });
        listChanged(chat);
        updateOpen(chat);
        schedule();
        if (archived) {
          toast(`Archived “${title}”.`, { action: "Undo", ms: 8000, onAction: () => actions.archive(id, false) });
        } else {
          toast(`“${title}” is back in your chats.`);
        }
      } catch (err) { toast(err.message); }
    },

    // -- temporary chats ----------------------------------------------------------------
    setDraft(changes) {
      const before = app.draft;
      app.draft = { ...app.draft, ...changes };
      // Leaving the folder changes the model the new chat would start with.
      if (before.folderId !== app.draft.folderId && app.route.name === "new") hooks.showNewChat();
      schedule();
    },

    resetDraft() {
      const was = app.draft;
      app.draft = NO_DRAFT;
      return was.folderId !== null || was.temporary;
    },

    /** Keep a temporary chat: it becomes a normal chat, listed and not deleted at exit. */
    async keep(id) {
      try {
        const chat = await patch(`/api/chats/${enc(id)}`, { temporary: false });
        updateOpen(chat);
        listChanged(chat);
        toast("Chat kept. It is in your chat list now.");
      } catch (err) { toast(err.message); }
    },

    // -- trash ------------------------------------------------------------------------
    async restore(id, title) {
      try {
        await post(`/api/chats/${enc(id)}/restore`);
        await hooks.refreshChats();
        toast(`Restored “${title || "New chat"}”.`, { action: "Open", ms: 8000, onAction: () => go(chatPath(id)) });
        return true;
      } catch (err) { toast(err.message); return false; }
    },

    async purge(id, title) {
      const ok = await confirm({
        title: "Delete forever?",
        message: `“${title || "New chat"}” and all its messages will be deleted for good. This cannot be undone.`,
        confirm: "Delete forever",
      });
      if (!ok) return false;
      try {
        await del(`/api/chats/${enc(id)}?purge=1`);
        toast("Deleted forever.");
        return true;
      } catch (err) { toast(err.message); return false; }
    },

    async emptyTrash(count) {
      const ok = await confirm({
        title: "Empty the trash?",
        message: `${count == null ? "Every chat" : count === 1 ? "The chat" : `All ${count} chats`} in the trash will be deleted for good. This cannot be undone.`,
        confirm: "Empty trash",
      });
      if (!ok) return false;
      try {
        const r = await del("/api/trash");
        toast(r.purged === 1 ? "1 chat deleted forever." : `${r.purged} chats deleted forever.`);
        return true;
      } catch (err) { toast(err.message); return false; }
    },
  };
  return actions;
}
