"""The process's open-file limit: raised from the soft to the hard limit at start."""
from __future__ import annotations

import logging
import sys

log = logging.getLogger(__name__)
# macOS refuses a soft limit above OPEN_MAX whatever the hard limit says (often
# RLIM_INFINITY there); elsewhere an unlimited hard limit is capped as well.
MACOS_OPEN_MAX = 10240
UNLIMITED_CAP = 1 << 20


def raise_open_file_limit() -> tuple[int, int] | None:
    """Set the soft RLIMIT_NOFILE to the hard one; (old, new) soft limit, None where nothing changed.

    Every open socket and database connection is a descriptor, and the common
    default soft limits (1024 on Linux, 256 on macOS) are far below what the
    system allows this process. Windows has no such limit (no `resource`).
    """
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if sys.platform == "darwin":
        target = MACOS_OPEN_MAX if hard == resource.RLIM_INFINITY else min(hard, MACOS_OPEN_MAX)
    elif hard == resource.RLIM_INFINITY:
        target = UNLIMITED_CAP
    if soft == resource.RLIM_INFINITY or soft >= target:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        log.warning("could not raise the open-file limit from %d to %d (%s)", soft, target, exc)
        return None
    log.info("open-file limit raised from %d to %d", soft, target)
    return soft, target
