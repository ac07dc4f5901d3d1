"""The one database object, opened at start-up with the pragmas Numi relies on."""
from __future__ import annotations

import time
from contextlib import contextmanager

import peewee

# Deferred: the path is only known once the data dir is. IMMEDIATE makes every
# write transaction take the write lock up front, so two writers queue on the
# busy timeout instead of one failing with SQLITE_BUSY_SNAPSHOT mid-transaction.
db = peewee.SqliteDatabase(None, lock_type="IMMEDIATE")

DEFAULT_BUSY_TIMEOUT_MS = 5000


def open_database(path: str, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> peewee.SqliteDatabase:
    """Point `db` at `path` and bring its schema up to date."""
    db.init(path, pragmas={
        "journal_mode": "wal",
        # FULL: a committed message is on disk before the commit returns, so a
        # power cut cannot take back a reply the UI already showed as saved.
        "synchronous": 2,
        "busy_timeout": busy_timeout_ms,
        "foreign_keys": 1,
    })
    from backend.store.migrations import migrate
    with db.connection_context():
        migrate(db)
    return db


@contextmanager
def short_connection():
    """A block whose queries use a connection opened on the first one and closed at its end.

    For threads that live long but query seldom (a socket's reader): peewee holds
    a connection per thread, and each costs file descriptors (the db and its -wal)
    for as long as it stays open. A connection already open when the block starts
    is left open.
    """
    was_open = not db.is_closed()
    try:
        yield
    finally:
        if not was_open and not db.is_closed():
            db.close()


def release_connection() -> None:
    """Close this thread's connection, if it has one (the next query opens another)."""
    if not db.is_closed():
        db.close()


def now() -> float:
    return time.time()


def is_busy_error(exc: BaseException) -> bool:
    return isinstance(exc, peewee.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))
