"""Long writes as a series of short transactions, so other writers get the database in between.

SQLite lets one writer in at a time. A writer that finds the database locked
sleeps in SQLite's busy handler and tries again: after 1, 2, 5, 10, 15, 20, 25,
25, 25, 50, 50 ms, then every 100 ms. So a long write (an import, a big purge)
runs as transactions of about HOLD_S seconds with a pause of PAUSE_S after
each. A writer that began waiting during a transaction has waited less than
about 120 ms when the pause starts, so its next try is at most 25 ms away and
falls inside the pause: it gets in. A turn's partial text or a new chat then
waits at most about HOLD_S, and the contract's rule that no write holds the
database for more than about half a second holds; the long write keeps about
60 % of the time for itself.
"""
from __future__ import annotations

import time
from typing import Iterator

from backend.store.db import db

HOLD_S = 0.1
PAUSE_S = 0.06


def run(work: Iterator, pause: bool = True) -> None:
    """Run `work`, a generator that writes a little (a few ms) between yields, in
    transactions of about HOLD_S each with PAUSE_S between them (`pause=False`: none,
    for when nothing else can be waiting). An exception rolls back only the
    transaction it happens in; the earlier ones are committed."""
    done = False
    while not done:
        with db.atomic():
            started = time.monotonic()
            for _ in work:
                if time.monotonic() - started >= HOLD_S:
                    break
            else:
                done = True
        if pause and not done:
            time.sleep(PAUSE_S)
