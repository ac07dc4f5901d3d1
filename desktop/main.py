"""`numi`: the desktop app (CONTRACT §1).

The window is the default. With no display or no GUI backend, Numi says so in
one log line and runs as `numi --headless --open-browser`. A second launch on a
data dir that already has a Numi asks that one to show its window and exits 0.
"""
from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import time

from backend import private_files
from backend.cli import parse_args, run_headless, setup_logging

log = logging.getLogger("numi.desktop")


def main(argv=None) -> int:
    t0 = time.monotonic()
    args = parse_args(argv)
    if args.headless:
        return run_headless(args)

    from backend.instance import InstanceLock, running_server

    private_files.restrict_umask()
    lock = InstanceLock(args.data_dir)
    if not lock.acquire():
        return hand_over(args, running_server(args.data_dir))

    from desktop.gui import pick_gui

    gui, reason = pick_gui()
    if gui is None:
        lock.release()
        setup_logging(args.data_dir)
        log.warning("No desktop window: %s. Running headless and opening the UI in the browser "
                    "(numi --headless --open-browser).", reason)
        args.open_browser = True
        return run_headless(args)

    setup_logging(args.data_dir)
    private_files.fix_modes(args.data_dir)
    if os.environ.get("NUMI_DEBUG_STACKS") and hasattr(signal, "SIGRTMIN"):
        # Debugging a hang: `kill -s RTMIN+5 <pid>` prints every thread's stack. (Not SIGUSR1:
        # WebKit's JavaScriptCore uses it for garbage collection.)
        faulthandler.register(signal.SIGRTMIN + 5, all_threads=True)
    from desktop.app import DesktopApp

    try:
        return DesktopApp(args, gui, t0).run()
    finally:
        lock.release()


def hand_over(args, info: dict | None) -> int:
    """Ask the running Numi to show its window; exit 0 either way it is running."""
    if info is None:
        print("Another Numi is starting on this data dir; try again in a moment.", file=sys.stderr)
        return 1
    from backend.cli import signed_in_line
    from backend.instance import post_to_running, sign_in_link

    try:
        status, _ = post_to_running(info, "/api/desktop/show")
    except (OSError, ValueError) as exc:
        print(f"Numi is already running at {info['url']} but did not answer ({exc}).", file=sys.stderr)
        return 1
    if status == 200:
        print("Numi is already running; its window was brought to the front.")
    else:  # a headless server has no window to show: a fresh address that signs in
        print(signed_in_line(info["url"], sign_in_link(info), "Numi is already running at"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
