"""The tray icon (pystray): Open, New chat, the running-turn count, Keep in tray, Quit.

pystray is imported lazily: its X backend connects to the display at import.
Menu callbacks run on the toolkit's thread; each hands its work to a short
thread of its own so a dialog (Quit's question) never blocks the GUI loop it
needs.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path

log = logging.getLogger(__name__)
COUNT_ITEM = 2  # the menu's running-turn count line
KEEP_ITEM = 4  # "Keep Numi in the tray when the window closes" (after the separator)


class Tray:
    def __init__(self, app, icon_path: Path):
        self.app = app
        self.icon_path = icon_path
        self.icon = None

    def _menu(self):
        import pystray
        item = pystray.MenuItem

        def later(fn):
            return lambda *_: threading.Thread(target=fn, name="tray-action", daemon=True).start()

        return pystray.Menu(
            item("Open Numi", later(self.app.show), default=True),
            item("New chat", later(self.app.new_chat)),
            item(lambda _: self._count_text(), None, enabled=False),
            pystray.Menu.SEPARATOR,
            item("Keep Numi in the tray when the window closes", lambda *_: self.app.toggle_keep_in_tray(),
                 checked=lambda _: self.app.state.state.keep_in_tray),
            item("Quit Numi", later(lambda: self.app.quit(ask=True))),
        )

    def _count_text(self) -> str:
        n = self.app.running_count()
        return "No replies running" if n == 0 else f"{n} {'reply' if n == 1 else 'replies'} running"

    def start(self, detached: bool) -> None:
        """GTK: `detached` (the icon joins pywebview's GTK loop). Qt/others: a thread of its own."""
        import pystray
        from PIL import Image

        self.icon = pystray.Icon("numi", Image.open(self.icon_path), "Numi", menu=self._menu())
        if detached:
            # pystray rebuilds the whole menu after every click (its update_menu()), and once a new
            # Gtk.Menu is shown GTK drops the window's delete events: the close button stops working
            # (seen after "Keep in tray" was clicked). After the first build the menu is changed in
            # place, on the GTK thread; the appindicator's D-Bus menu follows.
            build = self.icon.update_menu

            def update_menu() -> None:
                if getattr(self.icon, "_menu_handle", None) is None:
                    build()
                else:
                    from gi.repository import GLib
                    GLib.idle_add(self._sync_gtk)

            self.icon.update_menu = update_menu
            self.icon.run_detached()
        else:
            threading.Thread(target=self.icon.run, name="tray", daemon=True).start()
        log.info("desktop: tray icon created (pystray backend %s)", type(self.icon).__module__)

    def refresh(self) -> None:
        """Show the current running-turn count in the menu."""
        if self.icon is None:
            return
        try:
            self.icon.update_menu()  # on GTK, changed in place (see start)
        except Exception:
            log.exception("desktop: could not refresh the tray menu")

    def _sync_gtk(self) -> bool:
        """The menu's two changing items, changed in place: the count line and the keep-in-tray tick."""
        handle = getattr(self.icon, "_menu_handle", None)
        if handle is not None:
            items = handle.get_children()
            if len(items) > KEEP_ITEM:
                items[COUNT_ITEM].set_label(self._count_text())
                # set_active emits "toggled", not the "activate" pystray listens to: no click is made.
                items[KEEP_ITEM].set_active(self.app.state.state.keep_in_tray)
        return False

    def stop(self) -> None:
        if self.icon is not None:
            try:
                self.icon.stop()
            except Exception:
                log.exception("desktop: could not remove the tray icon")
