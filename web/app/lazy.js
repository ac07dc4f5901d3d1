// Screens and dialogs a chat's first paint does not need: loaded with import() on first
// use, so the page starts with fewer modules to read and compile (index.html preloads
// only the static imports). warm() loads them all once the page is idle after start, so
// opening Settings or search is still instant.

function once(load) {
  let loading = null;
  return () => (loading ??= load().catch((err) => { loading = null; throw err; }));
}

export const screens = {
  settings: once(() => import("./views/settings.js")),
  firstRun: once(() => import("./views/firstrun.js")),
  trash: once(() => import("./views/trash.js")),
  archive: once(() => import("./views/archive.js")),
  search: once(() => import("./views/search.js")),
  dialogs: once(() => import("./views/dialogs.js")),
  folders: once(() => import("./views/folders.js")),
  inspector: once(() => import("./views/inspector.js")),
};

export function warm() {
  for (const load of Object.values(screens)) load().catch(() => {});
}
