// Keys shared by the app's small menus (a chat's ⋯ in the list, a folder's, the chat header's).

/** Up/Down/Home/End between a menu's items, Esc closes it (focus back on its button). */
export function menuKeys(menu, close) {
  menu.addEventListener("keydown", (e) => {
    const items = [...menu.querySelectorAll("button:not(:disabled)")];
    const at = items.indexOf(document.activeElement);
    const move = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[e.key];
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); close(); }
    else if (move !== undefined) { e.preventDefault(); e.stopPropagation(); items[(move + items.length) % items.length]?.focus(); }
  });
}
