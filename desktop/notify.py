"""Native notifications through desktop-notifier (freedesktop D-Bus on Linux,
UNUserNotificationCenter on macOS, WinRT toasts on Windows).

desktop-notifier is asyncio-based: it gets its own event loop on a daemon
thread, which also receives the click signals. A click calls `on_click(chat_id)`
on that thread.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, icon: Path, on_click: Callable[[str], None]):
        self.icon, self.on_click = icon, on_click
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="notify", daemon=True)
        self._notifier = None
        self.sent = 0

    def start(self) -> None:
        self._thread.start()

    def notify(self, title: str, message: str, chat_id: str) -> None:
        """Show a notification (never raises; a missing notification daemon is logged)."""
        asyncio.run_coroutine_threadsafe(self._send(title, message, chat_id), self._loop)

    async def _send(self, title: str, message: str, chat_id: str) -> None:
        try:
            if self._notifier is None:
                from desktop_notifier import DesktopNotifier, Icon
                self._notifier = DesktopNotifier(app_name="Numi", app_icon=Icon(path=self.icon))
            await self._notifier.send(title=title, message=message,
                                      on_clicked=lambda: self.on_click(chat_id))
            self.sent += 1
            log.info("desktop: notification shown for chat %s", chat_id)
        except Exception as exc:
            log.warning("desktop: could not show a notification (%s)", exc)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
