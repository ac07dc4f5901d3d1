"""The images feature's app-wide part: the file store and key store its drawings use, and the
partial images a streaming model sent, held in memory for a while.

A partial image is a preview of a drawing in progress (CONTRACT §13 allows "progressive partial
images"): it is shown while the final one is drawn, never kept. The feature's `image_partial`
event names it by an address (`GET /api/images/partials/<id>`, routes.py) that serves it from
here; at most PARTIALS_HELD of them (PARTIAL_BYTES in all) are held, each for PARTIAL_TTL_S,
the oldest going first.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from backend.turns.features import AppContext, FeatureService

PARTIALS_HELD = 12
PARTIAL_BYTES = 96 * 1024 * 1024
PARTIAL_TTL_S = 600.0


@dataclass(frozen=True)
class Held:
    data: bytes
    mime: str
    until: float


class ImagesService(FeatureService):
    def __init__(self, ctx: AppContext):
        self.files = ctx.files
        self.keys = ctx.keys
        self._lock = threading.Lock()
        self._partials: OrderedDict[str, Held] = OrderedDict()

    def hold_partial(self, data: bytes, mime: str) -> str:
        """Keep a partial image for a while; its id."""
        partial_id = "ip_" + secrets.token_hex(12)
        with self._lock:
            self._partials[partial_id] = Held(data, mime, time.monotonic() + PARTIAL_TTL_S)
            self._trim()
        return partial_id

    def partial(self, partial_id: str) -> Held | None:
        with self._lock:
            self._trim()
            return self._partials.get(partial_id)

    def _trim(self) -> None:
        now = time.monotonic()
        while self._partials and (len(self._partials) > PARTIALS_HELD
                                  or sum(len(h.data) for h in self._partials.values()) > PARTIAL_BYTES
                                  or next(iter(self._partials.values())).until < now):
            self._partials.popitem(last=False)

    def stop(self, timeout: float) -> None:
        with self._lock:
            self._partials.clear()
