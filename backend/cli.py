"""Command line: `numi --headless` / `python -m backend`, as CONTRACT §1 gives it."""
from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import signal
import sys
import threading
import webbrowser
from pathlib import Path

from backend import __version__

log = logging.getLogger("numi")


def default_data_dir() -> Path:
    import platformdirs
    return Path(platformdirs.user_data_dir("Numi", appauthor=False))


def parse_args(argv=None, *, headless_only: bool = False) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="numi", description="Numi, a desktop chat app for LLMs.")
    parser.add_argument("--version", action="version", version=f"numi {__version__}")
    if not headless_only:
        parser.add_argument("--headless", action="store_true", help="run the backend alone, no window or tray")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="where history, files and settings live (env NUMI_DATA_DIR)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--open-browser", action="store_true", help="open the UI in the default browser")
    args = parser.parse_args(argv)
    if headless_only:
        args.headless = True
    if args.data_dir is None:
        env = os.environ.get("NUMI_DATA_DIR")
        args.data_dir = Path(env) if env else default_data_dir()
    args.data_dir = args.data_dir.expanduser().resolve()
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    return args


def setup_logging(data_dir: Path) -> None:
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    file_handler = logging.handlers.RotatingFileHandler(logs / "numi.log", maxBytes=2_000_000, backupCount=3)
    file_handler.setFormatter(fmt)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(fmt)
    root = logging.getLogger()
    root.handlers[:] = [file_handler, console]
    root.setLevel(logging.INFO)
    # werkzeug logs every request line, which for a chat app is noise in the log file.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)


def run_headless(args: argparse.Namespace) -> int:
    from backend.app import Config
    from backend.instance import InstanceLock, running_server
    from backend.server import NumiServer

    lock = InstanceLock(args.data_dir)
    if not lock.acquire():
        info = running_server(args.data_dir)
        if info is None:
            print("Another Numi is starting on this data dir; try again in a moment.", file=sys.stderr)
            return 1
        print(f"Numi is already running at {info['url']}")
        return 0

    setup_logging(args.data_dir)
    server = NumiServer(Config(data_dir=args.data_dir, port=args.port))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    print(f"Numi is running at {server.url}", flush=True)
    if args.open_browser:
        # The token travels once in this URL; the page trades it for an HttpOnly cookie.
        webbrowser.open(f"{server.url}?token={server.config.token}")
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        lock.release()
    return 0


def main(argv=None) -> int:
    return run_headless(parse_args(argv, headless_only=True))
