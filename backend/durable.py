"""Making a rename survive a power cut: the folder entry must reach the disk too."""
from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """fsync a folder after a rename into it (POSIX; elsewhere the rename is what there is)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
