// Light/dark: follow prefers-color-scheme unless the person picked one (kept in
// localStorage, and in a cookie the server reads to write data-theme into the page,
// so the choice applies before the first paint with no blocking script).
const KEY = "numi.theme";
const COOKIE = "numi_theme";

export function getTheme() {
  try { return localStorage.getItem(KEY) || "system"; } catch { return "system"; }
}

export function setTheme(theme) {
  try {
    if (theme === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, theme);
  } catch { /* storage may be off; the choice then lasts this page only */ }
  apply(theme);
}

export function apply(theme = getTheme()) {
  const picked = theme === "light" || theme === "dark";
  if (picked) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  document.cookie = picked ? `${COOKIE}=${theme}; path=/; max-age=31536000; SameSite=Strict`
    : `${COOKIE}=; path=/; max-age=0; SameSite=Strict`;
}

/** The theme the page shows now, for the quick toggle. */
export function effectiveTheme() {
  const t = getTheme();
  if (t !== "system") return t;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function toggleTheme() {
  setTheme(effectiveTheme() === "dark" ? "light" : "dark");
}
