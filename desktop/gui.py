"""Which pywebview backend this machine can run, or why none can.

Linux: GTK (WebKitGTK through PyGObject). The tray needs `gi` anyway (pystray's
appindicator backend is the only Linux one with a menu), so GTK gives window,
tray menu and dialogs from one toolkit; it also uses about two thirds of Qt
WebEngine's memory and freezes to well under half its size, which keeps the
.deb small (WebKitGTK comes from the distribution as a dependency).
macOS: Cocoa (WKWebView). Windows: EdgeChromium (WebView2).
"""
from __future__ import annotations

import os
import sys


def pick_gui() -> tuple[str | None, str]:
    """(pywebview gui name, "") when a window can open here, else (None, the reason)."""
    if sys.platform == "darwin":
        return "cocoa", ""
    if sys.platform == "win32":
        return "edgechromium", ""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None, "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    try:
        import gi
        gi.require_version("Gtk", "3.0")
        gi.require_version("WebKit2", "4.1")
        from gi.repository import Gtk, WebKit2  # noqa: F401  (WebKit2: that it loads is the check)
    except (ImportError, ValueError) as exc:
        return None, f"the GTK/WebKitGTK backend is not installed ({exc})"
    ok = Gtk.init_check(sys.argv[:1])
    if isinstance(ok, tuple):
        ok = ok[0]
    if not ok:
        return None, "the display could not be opened"
    return "gtk", ""
