// Light/dark: follow prefers-color-scheme unless the person picked one. The choice is
// kept by the server (settings.ui.theme, see ui-choices.js), which writes data-theme
// into the page so it applies before the first paint with no blocking script; a cookie
// carries it too for a page loaded before sign-in.
import { uiChoices, saveUiChoices, onUiChoices } from "./ui-choices.js";

const COOKIE = "numi_theme";

export function getTheme() {
  return uiChoices().theme;
}

export function setTheme(theme) {
  saveUiChoices({ theme });
}

export function apply(theme = getTheme()) {
  const picked = theme === "light" || theme === "dark";
  if (picked) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  document.cookie = picked ? `${COOKIE}=${theme}; path=/; max-age=31536000; SameSite=Strict`
    : `${COOKIE}=; path=/; max-age=0; SameSite=Strict`;
}

// Picked here, in another window, or read from the server at start.
onUiChoices((choices) => apply(choices.theme));

/** The theme the page shows now, for the quick toggle. */
export function effectiveTheme() {
  const t = getTheme();
  if (t !== "system") return t;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function toggleTheme() {
  setTheme(effectiveTheme() === "dark" ? "light" : "dark");
}
