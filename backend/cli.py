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

from backend import __version__, private_files

log = logging.getLogger("numi")


def default_data_dir() -> Path:
    import platformdirs
    return Path(platformdirs.user_data_dir("Numi", appauthor=False))


def parse_args(argv=None, *, headless_only: bool = False) -> argparse.Namespace:
    argv = sys.argv[1:] if argv is None else list(argv)
    if _command_word(argv) in DATA_COMMANDS:
        # `numi backup …` / `numi restore …` run and exit here, like --version does, so
        # every entry point that parses Numi's arguments (the desktop one too) has them.
        raise SystemExit(run_data_command(argv))
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


# -- numi backup / numi restore ---------------------------------------------------------

DATA_COMMANDS = ("backup", "restore")
_VALUED_OPTIONS = ("--data-dir", "--port")


def _command_word(argv: list[str]) -> str | None:
    """The first word that is not an option or an option's value."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in _VALUED_OPTIONS:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


def run_data_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="numi", description="Back up or restore Numi's database.")
    parser.add_argument("--data-dir", type=Path, default=None, help="the data dir (env NUMI_DATA_DIR)")
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("backup", help="copy numi.db consistently, also while Numi runs")
    b.add_argument("path", nargs="?", help="the new file (default: <data dir>/backups/numi-<time>.db)")
    r = commands.add_parser("restore", help="replace numi.db with a backup (Numi must not be running)")
    r.add_argument("path", help="the backup file")
    for sub in (b, r):
        sub.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.data_dir is None:
        env = os.environ.get("NUMI_DATA_DIR")
        args.data_dir = Path(env) if env else default_data_dir()
    data_dir = args.data_dir.expanduser().resolve()
    path = Path(os.path.abspath(os.path.expanduser(args.path))) if args.path else None
    private_files.restrict_umask()  # a backup is the whole history: readable by this user only
    return _backup(data_dir, path) if args.command == "backup" else _restore(data_dir, path)


def _backup(data_dir: Path, path: Path | None) -> int:
    from backend.instance import InstanceLock, running_server
    from backend.store import backup

    if not backup.db_path(data_dir).is_file():  # checked first: taking the lock would make the folder
        print(f"There is no Numi database in {data_dir}.", file=sys.stderr)
        return 2
    lock = InstanceLock(data_dir)
    if not lock.acquire():
        # Numi runs on this data dir: it makes the copy (its database, its lock).
        info = running_server(data_dir)
        if info is None:
            print("Numi is starting on this data dir; try again in a moment.", file=sys.stderr)
            return 1
        return _backup_via_server(info, path)
    try:
        dest = path or backup.default_path(data_dir)
        problem = backup.check_destination(dest) if path else None
        if problem:
            print(f"Cannot back up to {dest}: {problem}", file=sys.stderr)
            return 2
        try:
            result = backup.make_backup(backup.db_path(data_dir), dest)
        except (backup.BackupError, OSError) as exc:
            print(f"The backup failed: {exc}", file=sys.stderr)
            return 1
    finally:
        lock.release()
    print(f"Backed up to {result.path} ({result.size} bytes).")
    return 0


def _backup_via_server(info: dict, path: Path | None) -> int:
    from backend.instance import post_to_running

    try:
        status, data = post_to_running(info, "/api/backup", {"path": str(path)} if path else {}, timeout=120)
    except (OSError, ValueError) as exc:
        print(f"Could not reach the running Numi at {info.get('url')} ({exc}).", file=sys.stderr)
        return 1
    if status != 201:
        err = data.get("error", {})
        detail = " ".join((err.get("fields") or {}).values())
        print(f"The backup failed: {err.get('message', status)} {detail}".strip(), file=sys.stderr)
        return 2 if status == 422 else 1
    print(f"Backed up to {data['path']} ({data['size']} bytes), by the running Numi.")
    return 0


def _restore(data_dir: Path, path: Path) -> int:
    from backend.instance import InstanceLock
    from backend.store import backup

    lock = InstanceLock(data_dir)
    if not lock.acquire():
        print(f"Numi is running on {data_dir}. Quit it first, then restore. Nothing was changed.",
              file=sys.stderr)
        return 2
    try:
        kept = backup.restore(data_dir, path)
    except backup.BackupError as exc:
        print(f"Not restored: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"Not restored: {exc}. The current database is unchanged.", file=sys.stderr)
        return 1
    finally:
        lock.release()
    print(f"Restored {data_dir / backup.DB_NAME} from {path}. The previous database is kept as {kept}.")
    return 0


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


def signed_in_line(url: str, link: str | None, lead: str = "Numi is running at") -> str:
    """The line a person reads: the one address that opens Numi signed in, else the server's."""
    from backend.sign_in import PRINTED_TTL_S

    if link is None:
        return f"{lead} {url} (open Numi's window to sign in; no sign-in address could be made)"
    minutes = int(PRINTED_TTL_S // 60)
    # Only the sign-in address: the plain one opened first leads to a "Signed out" page.
    return f"{lead} {link} (open it to sign in; it works once, within {minutes} minutes)"


def run_headless(args: argparse.Namespace) -> int:
    from backend.app import Config
    from backend.instance import InstanceLock, running_server, sign_in_link
    from backend.server import NumiServer
    from backend.sign_in import PRINTED_TTL_S, links

    private_files.restrict_umask()
    lock = InstanceLock(args.data_dir)
    if not lock.acquire():
        info = running_server(args.data_dir)
        if info is None:
            print("Another Numi is starting on this data dir; try again in a moment.", file=sys.stderr)
            return 1
        link = sign_in_link(info)
        print(signed_in_line(info["url"], link, "Numi is already running at"), flush=True)
        if args.open_browser and link:
            webbrowser.open(link)
        return 0

    setup_logging(args.data_dir)
    private_files.fix_modes(args.data_dir)  # once the data dir is ours: no other Numi writes in it
    server = NumiServer(Config(data_dir=args.data_dir, port=args.port))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    # The token never leaves server.json: the person gets a one-time address (printed, not logged).
    link = server.url.rstrip("/") + links(server.app).new_path(PRINTED_TTL_S)
    print(signed_in_line(server.url, link), flush=True)
    if args.open_browser:
        webbrowser.open(server.url.rstrip("/") + links(server.app).new_path(PRINTED_TTL_S))
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        lock.release()
    return 0


def main(argv=None) -> int:
    return run_headless(parse_args(argv, headless_only=True))
