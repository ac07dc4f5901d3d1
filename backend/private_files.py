"""The data dir readable by this user only: folders 0700, files 0600, whatever the umask (CONTRACT §1).

Two halves: `restrict_umask()` early at start, so everything this process
creates from then on is private as it is created (SQLite's -wal and -shm, logs,
backups, attachments, rewritten files); and `fix_modes()` once the data dir is
ours, for what an earlier version or another program left readable.
"""
from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
POSIX = os.name == "posix"  # elsewhere there are no such modes to set


def _current_umask() -> int:
    # The umask can only be read by setting it; done once, at import, before any thread could race it.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# The umask the person started Numi with: what Numi makes for them outside the data dir
# (workspace files, the shell tool's commands) keeps to it.
USER_UMASK = _current_umask()


def restrict_umask() -> None:
    """From now on every file and folder this process creates is private."""
    if POSIX:
        os.umask(PRIVATE_UMASK)


def fix_modes(data_dir: Path) -> int:
    """Make the data dir and everything in it private, without following links; returns how many changed."""
    if not POSIX:
        return 0
    root = Path(data_dir).resolve()
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):  # no home folder to be known: nothing to protect
        home = None
    if home is not None and (root == home or root in home.parents):
        # A data dir that is the home folder (or holds it) is a mistake; making all of it
        # private would break far more than Numi.
        log.warning("Not changing file modes under %s: it is (or holds) the home folder. Give Numi a data "
                    "dir of its own (--data-dir).", root)
        return 0
    changed = _fix(root, DIR_MODE)
    for folder, dirs, files in os.walk(root):  # links to folders are listed, never entered
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue  # gone meanwhile
            if stat.S_ISDIR(st.st_mode):
                changed += _fix(path, DIR_MODE, st)
            elif stat.S_ISREG(st.st_mode):
                changed += _fix(path, FILE_MODE, st)
    if changed:
        log.info("Made %d paths in the data dir private (folders 0700, files 0600)", changed)
    return changed


def _fix(path, mode: int, st: os.stat_result | None = None) -> int:
    try:
        st = st or os.lstat(path)
        if stat.S_IMODE(st.st_mode) == mode:
            return 0
        os.chmod(path, mode)
        return 1
    except OSError as exc:  # e.g. a file another user owns: say so, fix the rest
        log.warning("Could not make %s private: %s", path, exc)
        return 0
