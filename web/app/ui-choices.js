// The person's display choices — theme, recently used models, folded folders — kept by
// the server in settings.ui: the desktop window runs in private mode and the server's
// port changes at every start, so the page's own storage forgets them. localStorage is
// only a cache, read before the settings arrive; the server's copy wins.
import { patch } from "./api.js";
import { schedule } from "./store.js";

const CACHE = "numi.ui";
// Where the page kept them before the server did: moved to the server once, then removed.
const LEGACY = { theme: "numi.theme", recent_models: "numi.recentModels", folded_folders: "numi.folders.collapsed" };
const THEMES = ["system", "light", "dark"];

let current = fromCache();
let unsent = {};        // changes not yet confirmed by the server
let saving = Promise.resolve();
const listeners = new Set();

function clean(value) {
  const v = value && typeof value === "object" ? value : {};
  const ids = (x) => (Array.isArray(x) ? x.filter((s) => typeof s === "string") : []);
  return { theme: THEMES.includes(v.theme) ? v.theme : "system", recent_models: ids(v.recent_models), folded_folders: ids(v.folded_folders) };
}

function fromCache() {
  let cached = {};
  try { cached = JSON.parse(localStorage.getItem(CACHE) || "{}"); } catch { /* storage off */ }
  // The server wrote the stored theme into <html> (backend/web_assets.py): newer than any cache.
  const written = document.documentElement.dataset.theme;
  return clean({ ...cached, theme: written || "system" });
}

function writeCache() {
  try { localStorage.setItem(CACHE, JSON.stringify(current)); } catch { /* private mode: the server keeps them */ }
}

/** The current choices: {theme, recent_models, folded_folders}. */
export function uiChoices() { return current; }

/** Call `fn` whenever the choices change (here or from the server). */
export function onUiChoices(fn) { listeners.add(fn); }

function changed() {
  writeCache();
  for (const fn of listeners) fn(current);
  schedule();
}

/** Change some choices: at once in the page, then saved on the server (PATCH merges keys). */
export function saveUiChoices(changes) {
  current = clean({ ...current, ...changes });
  unsent = { ...unsent, ...changes };
  changed();
  // One request at a time, so the server ends with the last change.
  saving = saving.then(async () => {
    const body = unsent;
    if (!Object.keys(body).length) return;
    unsent = {};
    try { await patch("/api/settings", { ui: body }); } catch { /* kept in the page; sent again with the next change */
      unsent = { ...body, ...unsent };
    }
  });
  return saving;
}

/** The server's choices (settings.ui) arrived: they win, except for changes still on their way. */
export function adoptUiChoices(serverUi) {
  if (!serverUi) return;
  const moved = legacyChoices(clean(serverUi));
  current = clean({ ...serverUi, ...unsent, ...moved });
  changed();
  if (Object.keys(moved).length) saveUiChoices(moved);
}

/** Choices an older Numi kept in this browser, where the server still has its defaults. */
function legacyChoices(server) {
  const moved = {};
  try {
    for (const [key, name] of Object.entries(LEGACY)) {
      const raw = localStorage.getItem(name);
      if (raw === null) continue;
      localStorage.removeItem(name);
      const value = key === "theme" ? raw : JSON.parse(raw);
      const isDefault = key === "theme" ? server.theme === "system" : !server[key].length;
      if (isDefault) moved[key] = clean({ [key]: value })[key];
    }
  } catch { /* unreadable: nothing to move */ }
  return moved;
}
