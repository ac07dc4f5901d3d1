// Light/dark: follow prefers-color-scheme unless the person picked one (kept in
// localStorage). theme-boot.js applies the stored choice before first paint.
const KEY = "numi.theme";

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
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
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
