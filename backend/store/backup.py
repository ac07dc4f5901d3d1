"""Backups of numi.db: consistent copies while turns stream, daily rotation, and restore.

A copy is made with SQLite's online backup API from a connection of its own: it
reads one snapshot (WAL readers never block the writers, and the writers never
tear the copy), so a reply streaming meanwhile is either in the copy as it was
at that instant or not. The copy is written next to its destination under a
temporary name, switched to a rollback journal (one self-contained file, no
-wal to carry along), checked with `PRAGMA integrity_check`, fsynced and only
then renamed into place.

Attachments (files/) are not copied: blobs are content-addressed, never changed
and never deleted by Numi (docs/PROTOCOL.md, "Files"), so every blob an older
copy of the database names is still in files/ on this machine. Moving to another
machine means copying files/ as well (or using `GET /api/export`, which carries
the bytes).
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from backend.durable import fsync_dir

log = logging.getLogger(__name__)

DB_NAME = "numi.db"
BACKUP_DIR = "backups"
DAY_S = 86_400.0
DEFAULT_KEEP = 7
# Automatic copies carry "auto" in their name: rotation only ever deletes those, never a
# copy the person asked for.
AUTO_NAME = re.compile(r"^numi-auto-(\d{8}-\d{6})\.db$")
STAMP = "%Y%m%d-%H%M%S"
REQUIRED_TABLES = {"chat", "message", "file", "folder", "setting"}


class BackupError(Exception):
    """A sentence for the person: what is wrong and what to do."""


@dataclass
class BackupResult:
    path: Path
    size: int
    created_at: float


def db_path(data_dir: Path) -> Path:
    return Path(data_dir) / DB_NAME


def default_path(data_dir: Path, auto: bool = False, when: float | None = None) -> Path:
    stamp = time.strftime(STAMP, time.localtime(time.time() if when is None else when))
    folder = Path(data_dir) / BACKUP_DIR
    base = f"numi-{'auto-' if auto else ''}{stamp}"
    path, n = folder / f"{base}.db", 1
    while path.exists():  # two backups in the same second keep both
        path, n = folder / f"{base}-{n}.db", n + 1
    return path


def check_destination(path: Path) -> str | None:
    """Why a backup cannot be written at `path` (None: it can)."""
    if not path.is_absolute():
        return "Give an absolute path, like /home/me/numi-backup.db."
    if path.exists():
        return "A file or folder already exists there; choose a new file name."
    if not path.parent.is_dir():
        return f"The folder {path.parent} does not exist; create it first or choose another."
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"Numi cannot write to the folder {path.parent}; choose another."
    return None


def make_backup(source: Path, dest: Path) -> BackupResult:
    """Copy the database at `source` to `dest` (which must not exist yet), consistently."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.partial")
    tmp.unlink(missing_ok=True)
    try:
        # A connection of our own: peewee's is per thread and may be inside a transaction.
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
        try:
            out = sqlite3.connect(tmp)
            try:
                src.backup(out)  # all pages in one step: one snapshot, never restarted by writers
                out.execute("PRAGMA journal_mode=DELETE")
                problem = _integrity(out)
                if problem:
                    raise BackupError(f"The copy did not pass SQLite's integrity check ({problem}); "
                                      f"the database may be damaged.")
            finally:
                out.close()
        finally:
            src.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dest)
        fsync_dir(dest.parent)
    except sqlite3.Error as exc:
        raise BackupError(f"The database could not be copied ({exc}).") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return BackupResult(dest, dest.stat().st_size, time.time())


def rotate(data_dir: Path, keep: int) -> list[Path]:
    """Delete all but the `keep` newest automatic backups (by the time in their name)."""
    folder = Path(data_dir) / BACKUP_DIR
    if not folder.is_dir():
        return []
    autos = sorted((p for p in folder.iterdir() if AUTO_NAME.match(p.name)), key=lambda p: p.name)
    gone = autos[:-keep] if keep > 0 else autos
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


def newest_auto(data_dir: Path) -> float | None:
    """When the newest automatic backup was made (from its name), or None."""
    folder = Path(data_dir) / BACKUP_DIR
    stamps = [m.group(1) for p in (folder.iterdir() if folder.is_dir() else ())
              if (m := AUTO_NAME.match(p.name))]
    times = []
    for stamp in stamps:
        try:
            times.append(time.mktime(datetime.strptime(stamp, STAMP).timetuple()))
        except ValueError:
            pass  # digits that are no date (a hand-named file): not one of ours
    return max(times, default=None)


# -- restore -------------------------------------------------------------------------

def check_restorable(path: Path) -> None:
    """Raise BackupError unless `path` is a sound Numi database this build can open."""
    from backend.store.migrations import MIGRATIONS

    if not path.is_file():
        raise BackupError(f"There is no file at {path}.")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            problem = _integrity(conn)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupError(f"{path} is not a readable SQLite database ({exc}). Nothing was changed.") from exc
    if problem:
        raise BackupError(f"{path} is damaged: SQLite's integrity check says {problem}. Nothing was changed.")
    if version < 1 or not REQUIRED_TABLES <= tables:
        raise BackupError(f"{path} is an SQLite database but not one of Numi's. Nothing was changed.")
    if version > len(MIGRATIONS):
        raise BackupError(f"{path} was written by a newer Numi (schema {version}, this one knows "
                          f"{len(MIGRATIONS)}). Update Numi first. Nothing was changed.")


def restore(data_dir: Path, source: Path) -> Path:
    """Make `source` the data dir's database. The caller holds the instance lock.

    The current database is kept as numi.db.before-restore-<time> (a hard link, so
    numi.db never goes missing), then the checked copy replaces it in one rename.
    Returns the path the old database was kept under.
    """
    check_restorable(source)
    live = db_path(data_dir)
    stamp = time.strftime(STAMP)
    kept = live.with_name(f"{DB_NAME}.before-restore-{stamp}")
    tmp = live.with_name(f".{DB_NAME}.restoring")
    shutil.copyfile(source, tmp)
    try:
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        check_restorable(tmp)  # what was copied, not only what was read
        if live.exists():
            try:
                os.link(live, kept)
            except OSError:
                shutil.copy2(live, kept)
            # A -wal left by a crash belongs to the old database: it goes with the kept copy.
            for suffix in ("-wal", "-shm"):
                side = live.with_name(DB_NAME + suffix)
                if side.exists():
                    if suffix == "-wal":
                        os.replace(side, kept.with_name(kept.name + suffix))
                    else:
                        side.unlink()
        os.replace(tmp, live)
        fsync_dir(live.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return kept


def _integrity(conn) -> str | None:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    return None if rows == ["ok"] else "; ".join(rows[:3])



# -- the daily automatic backup ----------------------------------------------------

def auto_enabled() -> bool:
    return os.environ.get("NUMI_AUTO_BACKUP", "1").strip() != "0"


def keep_count() -> int:
    raw = os.environ.get("NUMI_BACKUP_DAYS_KEEP", "").strip()
    try:
        return max(1, int(raw)) if raw else DEFAULT_KEEP
    except ValueError:
        log.warning("NUMI_BACKUP_DAYS_KEEP=%r is not a whole number; keeping %d", raw, DEFAULT_KEEP)
        return DEFAULT_KEEP


class AutoBackup:
    """One thread that sleeps on an Event until the next backup is due (never polls).

    Due means: no automatic backup in the last 24 h. So a start-up makes one when
    the newest is older than a day, and a long-running app makes one a day.
    """

    def __init__(self, data_dir: Path, keep: int | None = None):
        self.data_dir = Path(data_dir)
        self.keep = keep_count() if keep is None else keep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Call before the server takes requests: no backup it was asked for is in progress yet."""
        # A copy cut off by a crash or a kill; one server per data dir, so none is in progress.
        folder = self.data_dir / BACKUP_DIR
        for stray in folder.glob(".*.partial") if folder.is_dir() else ():
            stray.unlink(missing_ok=True)
        self._thread = threading.Thread(target=self._run, name="auto-backup", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            last = newest_auto(self.data_dir)
            due = 0.0 if last is None else last + DAY_S - time.time()
            # Capped at a day: a backup named in the future (a clock set back) cannot stop them.
            if self._stop.wait(min(DAY_S, max(0.0, due))):
                return
            if self.run_once() is None and self._stop.wait(3600):  # failed: try again in an hour
                return

    def run_once(self) -> BackupResult | None:
        try:
            result = make_backup(db_path(self.data_dir), default_path(self.data_dir, auto=True))
        except Exception:
            log.exception("the daily backup failed; the next try is in an hour")
            return None
        gone = rotate(self.data_dir, self.keep)
        log.info("daily backup %s (%d bytes); %d older removed", result.path, result.size, len(gone))
        return result
