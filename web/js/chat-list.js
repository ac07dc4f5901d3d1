// The chat list's rules for live changes (frames of /ws/_app), pure so node can test
// them (tests/js/chat-list.test.mjs). The list is what GET /api/chats gives without
// filters: not archived, not temporary, newest activity first; maybe only its first
// pages. Frames carry a chat's whole row as that list shows it, so applying the
// newest one per chat is right whatever was missed in between.

/** Newest activity first, ties by id, as the server orders (ISO times compare as strings). */
export function byActivity(a, b) {
  if (a.updated_at !== b.updated_at) return a.updated_at < b.updated_at ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** The open chat is being read: it never shows as unread, whatever a frame or a list read says. */
export function readIfOpen(chat, openId) {
  return chat.id === openId && chat.unread ? { ...chat, unread: false } : chat;
}

const inList = (chat) => !chat.archived && !chat.temporary;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The list after one frame; the same array when nothing visible changed (so nothing redraws).
 * @param {object[]} chats  the list, newest activity first
 * @param {object} frame    {type:"chat_changed", chat} | {type:"chat_removed", chat_id}
 * @param {{openId?: string|null, more?: boolean}} opts  more: older pages are not loaded yet
 */
export function applyChatFrame(chats, frame, { openId = null, more = false } = {}) {
  const id = frame.type === "chat_removed" ? frame.chat_id : frame.type === "chat_changed" ? frame.chat?.id : null;
  if (!id) return chats;
  const at = chats.findIndex((c) => c.id === id);
  const rest = at < 0 ? chats : chats.slice(0, at).concat(chats.slice(at + 1));
  if (frame.type === "chat_removed" || !inList(frame.chat)) return at < 0 ? chats : rest;
  const chat = readIfOpen(frame.chat, openId);
  if (at >= 0 && same(chats[at], chat)) return chats;
  const last = rest[rest.length - 1];
  // Not shown and older than everything loaded: it belongs to a page not read yet.
  if (at < 0 && more && last && byActivity(chat, last) > 0) return chats;
  let i = rest.findIndex((c) => byActivity(chat, c) < 0);
  if (i < 0) i = rest.length;
  return rest.slice(0, i).concat([chat], rest.slice(i));
}

/** An older page appended; a chat already listed (moved up by a frame meanwhile) keeps its newer row. */
export function appendPage(chats, items) {
  const have = new Set(chats.map((c) => c.id));
  return chats.concat(items.filter((c) => !have.has(c.id)));
}
