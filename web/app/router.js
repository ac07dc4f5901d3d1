// Hash routes, so a reload (and the desktop window's restore) reopens the same place:
//   #/c/<chat_id>  a chat     #/settings  settings     #/ (or empty)  a new, unsaved chat
//   #/archive  archived chats     #/trash  deleted chats

// Set by early.js, the classic script the page runs first.
const { CHAT_ROUTE } = self.numiEarly;

export function parseRoute(hash = location.hash) {
  const path = hash.replace(/^#/, "") || "/";
  let m = path.match(CHAT_ROUTE);
  if (m) return { name: "chat", chatId: decodeURIComponent(m[1]) };
  if (path === "/settings") return { name: "settings" };
  if (path === "/archive" || path === "/trash") return { name: path.slice(1) };
  m = path.match(/^\/settings\/(\w+)$/);
  if (m) return { name: "settings", section: m[1] };
  return { name: "new" };
}

export function go(path) {
  const target = "#" + path;
  if (location.hash !== target) location.hash = target;
}

export const chatPath = (id) => `/c/${encodeURIComponent(id)}`;

export function onRoute(fn) {
  window.addEventListener("hashchange", () => fn(parseRoute()));
}
