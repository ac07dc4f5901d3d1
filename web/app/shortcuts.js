// Window-wide keys. Typing in a field is never hijacked: single-key shortcuts
// (? and /) only act outside inputs.
import { app } from "./store.js";
import { go, chatPath } from "./router.js";

function typing(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

export function installShortcuts(actions, session, view, sidebar) {
  document.addEventListener("keydown", (e) => {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    if (mod && !e.shiftKey && !e.altKey && key === "n") {
      e.preventDefault();
      actions.newChat();
    } else if (mod && !e.shiftKey && !e.altKey && key === "k") {
      // Search is wanted from anywhere, the message box included (the browser's own
      // Ctrl+K goes to its address bar otherwise).
      e.preventDefault();
      actions.search();
    } else if (mod && e.key === ",") {
      e.preventDefault();
      actions.settings();
    } else if (mod && e.shiftKey && key === "l") {
      e.preventDefault();
      actions.toggleTheme();
    } else if (mod && e.shiftKey && !e.altKey && key === "c" && view()?.copyLastReply) {
      // From anywhere, the message box included: the reply is what is usually wanted.
      e.preventDefault();
      view().copyLastReply();
    } else if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      const ids = app.chats.map((c) => c.id);
      if (!ids.length) return;
      e.preventDefault();
      const at = ids.indexOf(app.route.chatId);
      const next = at < 0 ? 0 : Math.max(0, Math.min(ids.length - 1, at + (e.key === "ArrowUp" ? -1 : 1)));
      go(chatPath(ids[next]));
    } else if (e.key === "Escape" && !e.defaultPrevented && !document.querySelector("dialog[open]")) {
      sidebar.closeMenu();
      if (document.getElementById("app")?.classList.contains("sidebar-open")) {
        e.preventDefault();
        // The closed drawer is hidden: focus left inside it would be lost to the page's
        // start. Give it to the message box, as a closed dialog does.
        const inDrawer = document.getElementById("sidebar")?.contains(document.activeElement);
        actions.closeSidebar();
        if (inDrawer) view()?.focus?.();
        return;
      }
      const s = session();
      if (s?.running) { e.preventDefault(); s.stop(); }
    } else if (!typing(e.target) && !mod && !e.altKey) {
      if (e.key === "?") { e.preventDefault(); actions.help(); }
      else if (e.key === "/") { e.preventDefault(); view()?.focus?.(); }
    }
  });
  // Close an open chat menu on any click elsewhere.
  document.addEventListener("click", (e) => { if (!e.target.closest?.(".menu, .item-menu")) sidebar.closeMenu(); });
  // Code block copy buttons live inside sanitized Markdown, so one delegated listener serves them all.
  document.addEventListener("click", async (e) => {
    const btn = e.target.closest?.(".code-copy");
    if (!btn) return;
    const code = btn.closest(".code-wrap")?.querySelector("pre")?.textContent || "";
    const { copyText } = await import("./dom.js");
    if (await copyText(code)) {
      btn.textContent = "Copied";
      setTimeout(() => { btn.textContent = "Copy"; }, 1500);
    }
  });
}
