"""The desktop app: backend thread + pywebview window + tray + notifications.

Threads: the main thread runs the GUI loop (`webview.start`); the HTTP server,
turns, the turn watcher and the notifier each have their own. Closing the
window while replies run (or with "Keep in tray" on) hides it; the app lives on
in the tray. Quit (tray, SIGTERM, SIGINT, closing the window when nothing runs)
stops running turns the way Stop does, then exits: the server gets 8 s of the
contract's 10.
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
import time
import webbrowser
from pathlib import Path
from urllib.parse import urlsplit

from backend import sign_in
from backend.app import Config
from backend.server import NumiServer
from desktop import media, routes
from desktop.state import MIN_SIZE, StateFile

log = logging.getLogger("numi.desktop")
ASSETS = Path(__file__).resolve().parent / "assets"
if hasattr(sys, "_MEIPASS"):
    ASSETS = Path(sys._MEIPASS) / "desktop" / "assets"


class DesktopApp:
    def __init__(self, args, gui: str, t0: float):
        self.args, self.gui, self.t0 = args, gui, t0
        self.state = StateFile(args.data_dir / "desktop.json")
        self.server = NumiServer(Config(data_dir=args.data_dir, port=args.port))
        self.origin = self.server.url.rstrip("/")
        routes.install(self.server.app, self._show_from_elsewhere, self._pick_folder)
        self.window = None
        self.tray = None
        self.notifier = None
        self.watcher = None
        self.visible = False
        self.focused = False
        self._quitting = threading.Event()
        self._stopped = threading.Event()
        self._first_paint_logged = False

    # --- start ------------------------------------------------------------------------

    def run(self) -> int:
        import webview

        webview.settings["ALLOW_DOWNLOADS"] = True  # export: the native Save dialog
        webview.settings["OPEN_EXTERNAL_LINKS_IN_BROWSER"] = True
        # The server's socket is already listening (bound in NumiServer()), so the window may
        # ask for the page while the backend finishes starting: the request waits in the
        # socket's backlog. Starting both at once takes the backend's start-up off first paint.
        self._backend_thread = threading.Thread(target=self._start_backend, name="backend-start", daemon=True)
        self._backend_thread.start()
        st = self.state.state
        first_page = self.origin + sign_in.links(self.server.app).new_path(sign_in.WINDOW_TTL_S)
        self.window = webview.create_window(
            "Numi", first_page, width=st.width, height=st.height,
            x=st.x, y=st.y, min_size=MIN_SIZE, background_color="#ffffff", text_select=True)
        ev = self.window.events
        ev.loaded += self._on_loaded
        ev.shown += self._on_shown
        ev.closing += self._on_closing
        ev.resized += self._on_resized
        ev.moved += self._on_moved
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self._spawn(self.quit, ask=False))
        try:
            webview.start(self._on_gui_started, gui=self.gui, private_mode=True)
        finally:
            self._shutdown()
        return 0

    def _start_backend(self) -> None:
        try:
            self.server.start()
        except Exception:
            log.exception("desktop: the backend could not start; quitting")
            self._quitting.set()
            self._stopped.set()
            if self.window is not None:
                self.window.destroy()
            return
        log.info("desktop: backend up %.3f s after launch", time.monotonic() - self.t0)

    def _on_gui_started(self) -> None:
        """Runs once the GUI loop is up (a pywebview thread)."""
        from desktop.notify import Notifier
        from desktop.tray import Tray
        from desktop.turns import TurnWatcher

        self._install_gtk_hooks()
        self.notifier = Notifier(ASSETS / "numi-256.png", self.open_chat)
        self.notifier.start()
        runtime = self.server.runtime
        self.watcher = TurnWatcher(runtime.turns, runtime.app_events, self._on_count,
                                   self._on_turn_finished, self._on_approval, self._on_question)
        self.watcher.start()
        self.tray = Tray(self, ASSETS / "numi-64.png")
        try:
            # GTK: join pywebview's loop (run_detached); elsewhere the icon gets its own thread.
            self.tray.start(detached=self.gui == "gtk")
        except Exception as exc:
            log.warning("desktop: no tray icon (%s); closing the window will quit Numi", exc)
            self.tray = None

    def _install_gtk_hooks(self) -> None:
        """Focus tracking, the page's title as the window's, and "links to other sites open in the browser"."""
        if self.gui != "gtk":
            self.focused = True
            return
        from gi.repository import GLib

        def install():
            from webview.platforms.gtk import BrowserView
            native = self.window.native
            native.connect("focus-in-event", lambda *_: setattr(self, "focused", True))
            native.connect("focus-out-event", lambda *_: setattr(self, "focused", False))
            native.set_icon_from_file(str(ASSETS / "numi-256.png"))
            view = BrowserView.instances[self.window.uid].webview
            view.connect("decide-policy", self._gtk_decide_policy)
            # The page names itself (document.title: the open chat's name), as a browser tab would.
            view.connect("notify::title", lambda v, _param: native.set_title(v.get_title() or "Numi"))
            media.enable(view, self.is_own_url)  # the microphone, for dictation (desktop/media.py)
            return False

        GLib.idle_add(install)

    def _gtk_decide_policy(self, _view, decision, _kind):
        import gi
        gi.require_version("WebKit2", "4.1")
        from gi.repository import WebKit2
        if isinstance(decision, WebKit2.NavigationPolicyDecision):
            uri = decision.get_navigation_action().get_request().get_uri()
            if not self.is_own_url(uri) and urlsplit(uri).scheme in ("http", "https", "mailto"):
                webbrowser.open(uri, 2, True)
                decision.ignore()
                return True
        return False

    def is_own_url(self, url: str) -> bool:
        parts = urlsplit(url or "")
        return parts.scheme == "http" and parts.netloc in (f"127.0.0.1:{self.server.config.port}",
                                                          f"localhost:{self.server.config.port}")

    # --- window events ------------------------------------------------------------------

    def _on_loaded(self) -> None:
        url = self.window.get_current_url() or ""
        if not self.is_own_url(url):
            return
        path = urlsplit(url).path
        if not self._first_paint_logged:
            self._first_paint_logged = True
            log.info("desktop: window loaded %s %.3f s after launch (signed in: %s)",
                     path, time.monotonic() - self.t0, "yes" if self._signed_in() else "no")
            if self.gui == "gtk":
                self._watch_ui_ready()

    def _watch_ui_ready(self) -> None:
        """Log when the UI has replaced the page's "Loading…" placeholder (first real paint).

        WebKitGTK's own evaluate_javascript, not pywebview's evaluate_js: the latter
        wraps the script in eval(), which the page's CSP refuses, rightly.
        """
        from gi.repository import GLib
        from webview.platforms.gtk import BrowserView

        probe = "document.querySelector('#app') !== null && document.querySelector('#app > .boot') === null"
        started = time.monotonic()

        def tick():
            view = BrowserView.instances.get(self.window.uid)
            if view is not None:
                view.webview.evaluate_javascript(probe, -1, None, None, None, done)
            return False

        def done(view, result):
            try:
                ready = view.evaluate_javascript_finish(result).to_boolean()
            except Exception:
                ready = False
            if ready:
                log.info("desktop: UI ready %.3f s after launch", time.monotonic() - self.t0)
            elif time.monotonic() - started < 60:
                GLib.timeout_add(50, tick)  # the page's modules are still loading
            else:
                log.warning("desktop: the UI did not start within 60 s of the page loading")

        GLib.idle_add(tick)

    def _signed_in(self) -> bool:
        """Does the window's cookie store hold this launch's session cookie?"""
        import hmac
        try:
            for jar in self.window.get_cookies():
                morsel = jar.get(sign_in.COOKIE)
                if morsel is not None:
                    return hmac.compare_digest(morsel.value.encode(), self.server.config.session.encode())
        except Exception:
            log.exception("desktop: could not read the window's cookies")
        return False

    def _on_shown(self) -> None:
        self.visible = True

    def _on_resized(self, width, height) -> None:
        st = self.state.state
        st.width, st.height = max(int(width), MIN_SIZE[0]), max(int(height), MIN_SIZE[1])

    def _on_moved(self, x, y) -> None:
        st = self.state.state
        st.x, st.y = int(x), int(y)

    def _on_closing(self):
        """False keeps the window (hidden, in the tray); anything else lets it close and quit."""
        log.info("desktop: the window is closing")
        self.state.save()
        if self._quitting.is_set():
            return True
        running = self.running_count()
        if self.tray is not None and (running or self.state.state.keep_in_tray):
            self.visible = False
            self.focused = False
            self.window.hide()
            log.info("desktop: window closed to the tray (%d replies running)", running)
            return False
        self._quitting.set()
        return True

    # --- actions (tray, second launch, notification clicks) -------------------------------

    def _pick_folder(self) -> str | None:
        import webview

        chosen = self.window.create_file_dialog(webview.FileDialog.FOLDER)
        return str(chosen[0]) if chosen else None

    def show(self) -> None:
        if self.window is None or self._quitting.is_set():
            return
        self.window.show()
        self.window.restore()
        self.visible = True
        log.info("desktop: window shown")

    def _show_from_elsewhere(self, chat_id: str | None) -> None:
        log.info("desktop: another launch asked for the window")
        self._spawn(self.open_chat if chat_id else self.show, *([chat_id] if chat_id else []))

    def open_chat(self, chat_id: str) -> None:
        log.info("desktop: opening chat %s", chat_id)
        self.show()
        self._navigate(f"#/c/{chat_id}")

    def new_chat(self) -> None:
        self.show()
        self._navigate("#/")

    def _navigate(self, route: str) -> None:
        # Only the fragment changes, so the page stays loaded and its router follows.
        # (evaluate_js is not an option: the page's CSP forbids eval, rightly.)
        if route == "#/" or routes.CHAT_ID.match(route.removeprefix("#/c/")):
            self.window.load_url(f"{self.origin}/{route}")

    def toggle_keep_in_tray(self) -> None:
        st = self.state.state
        st.keep_in_tray = not st.keep_in_tray
        self.state.save()
        log.info("desktop: keep in tray %s", "on" if st.keep_in_tray else "off")

    def running_count(self) -> int:
        return len(self.server.runtime.turns.running_chat_ids())

    def quit(self, ask: bool) -> None:
        if self._quitting.is_set() and self._stopped.is_set():
            return
        n = self.running_count()
        if ask and n:
            self.show()
            log.info("desktop: asking before quitting (%d replies running)", n)
            if not self.window.create_confirmation_dialog(
                    "Quit Numi?", f"{n} {'reply is' if n == 1 else 'replies are'} still running. "
                    "Quitting stops them; what they wrote so far is kept."):
                log.info("desktop: quit cancelled")
                return
        log.info("desktop: quitting (%d replies running)", n)
        self._quitting.set()
        self.state.save()
        self._stop_backend()
        if self.tray is not None:
            self.tray.stop()
        self.window.destroy()

    # --- turn watcher callbacks ---------------------------------------------------------------

    def _on_count(self, n: int) -> None:
        if self.tray is not None:
            self.tray.refresh()

    def _attention(self) -> bool:
        return not (self.visible and self.focused)

    def _on_turn_finished(self, chat: dict) -> None:
        if self._quitting.is_set() or not self._attention():
            return
        self.notifier.notify(chat.get("title") or "Numi", "The reply is ready.", chat["id"])

    def _on_approval(self, chat: dict, event: dict) -> None:
        if self._quitting.is_set() or not self._attention():
            return
        self.notifier.notify(chat.get("title") or "Numi",
                             f"Waiting for your approval to run {event.get('name', 'a tool')}.", chat["id"])

    def _on_question(self, chat: dict, question: dict) -> None:
        if self._quitting.is_set() or not self._attention():
            return
        items = question.get("items") or [{}]
        prompt = items[0].get("prompt") or "a question"
        more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
        self.notifier.notify(chat.get("title") or "Numi", f"Asks you: {_clip(prompt, 120)}{more}", chat["id"])

    # --- stop ---------------------------------------------------------------------------

    def _stop_backend(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._backend_thread.join(15)  # a quit during start-up waits for the start to finish
        if self.watcher is not None:
            self.watcher.stop()
        self.server.stop()  # refuses new turns, stops running ones like Stop, then closes

    def _shutdown(self) -> None:
        self._quitting.set()
        self.state.save()
        self._stop_backend()
        if self.tray is not None:
            self.tray.stop()
        if self.notifier is not None:
            self.notifier.stop()
        log.info("desktop: exited %.3f s after launch", time.monotonic() - self.t0)

    @staticmethod
    def _spawn(fn, *args, **kw) -> None:
        threading.Thread(target=fn, args=args, kwargs=kw, name="desktop-action", daemon=True).start()


def _clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters (a notification's body is short)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"
