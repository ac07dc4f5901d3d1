"""What the desktop shell remembers between runs: window geometry and the tray setting.

Kept in `<data-dir>/desktop.json` (mode 0600) rather than the settings API: it
belongs to this shell alone, and the headless server never reads it.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from backend.server import write_private_json

log = logging.getLogger(__name__)
DEFAULT_SIZE = (1100, 760)
MIN_SIZE = (480, 360)


@dataclass
class DesktopState:
    width: int = DEFAULT_SIZE[0]
    height: int = DEFAULT_SIZE[1]
    x: int | None = None
    y: int | None = None
    keep_in_tray: bool = False  # closing the window always keeps Numi in the tray

    @classmethod
    def load(cls, path: Path) -> "DesktopState":
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s (%s)", path, exc)
            return cls()
        state = cls()
        for key in ("width", "height", "x", "y"):
            value = raw.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(state, key, value)
        state.width = max(state.width, MIN_SIZE[0])
        state.height = max(state.height, MIN_SIZE[1])
        state.keep_in_tray = raw.get("keep_in_tray") is True
        return state

    def fit(self, screens: list[tuple[int, int, int, int]]) -> None:
        """Forget a position that no screen shows any more (a monitor was unplugged)."""
        if self.x is None or self.y is None or not screens:
            return
        for sx, sy, sw, sh in screens:
            if sx <= self.x + 40 < sx + sw and sy <= self.y + 20 < sy + sh:
                return
        self.x = self.y = None


class StateFile:
    """The state plus its file; `save()` is cheap and may be called from any thread."""

    def __init__(self, path: Path):
        self.path = path
        self.state = DesktopState.load(path)
        self._lock = threading.Lock()

    def save(self) -> None:
        with self._lock:
            try:
                write_private_json(self.path, asdict(self.state))
            except OSError:
                log.exception("could not save %s", self.path)
