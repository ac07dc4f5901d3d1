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


class Tray:
    def __init__(self, app, icon_path: Path):
        self.app = app
        self.icon_path = icon_path
        self.icon = None
        self._detached = False

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
        self._detached = detached
        if detached:
            self.icon.run_detached()
        else:
            threading.Thread(target=self.icon.run, name="tray", daemon=True).start()
        log.info("desktop: tray icon created (pystray backend %s)", type(self.icon).__module__)

    def refresh(self) -> None:
        """Show the current running-turn count in the menu."""
        if self.icon is None:
            return
        try:
            if self._detached:
                # pystray's update_menu() builds a new Gtk.Menu and shows it, and from then on
                # GTK drops the window's delete events (the close button stops working). So on
                # GTK the one label that changes is changed in place, on the GTK thread; the
                # appindicator's D-Bus menu follows the label.
                from gi.repository import GLib
                GLib.idle_add(self._relabel_gtk)
            else:
                self.icon.update_menu()
        except Exception:
            log.exception("desktop: could not refresh the tray menu")

    def _relabel_gtk(self) -> bool:
        handle = getattr(self.icon, "_menu_handle", None)
        if handle is not None:
            items = handle.get_children()
            if len(items) > COUNT_ITEM:
                items[COUNT_ITEM].set_label(self._count_text())
        return False

    def stop(self) -> None:
        if self.icon is not None:
            try:
                self.icon.stop()
            except Exception:
                log.exception("desktop: could not remove the tray icon")
