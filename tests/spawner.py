"""A fork server for test servers: `python -m backend` without paying its imports each time.

Most of a test server's start-up is Python importing Flask, the SDKs and Numi
itself (about a second of CPU, most of it the `openai` and `anthropic` packages
the warm-up loads). This process imports them once, then forks a child per
server; the child sets its own arguments, environment, working folder and
standard streams and runs `backend` as `python -m backend` would. Each child is
still a real, separate server process: kill -9, SIGTERM and restarts behave as
with a fresh interpreter. What only a fresh interpreter can show (a `preexec_fn`,
interpreter flags in the environment) is started the old way by the client.

Protocol (one Unix-socket connection per server): the client sends one JSON
request with its stdout pipe as a passed descriptor; the spawner answers
`{"pid": N}` and, when the child exits, `{"status": code}` (Popen's returncode).
The spawner ends when its stdin closes, and takes any children still running
with it.
"""
from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import sys
import threading

# The libraries a server loads on start-up and in its first turn (the warm-up imports the
# SDKs; an MCP server's first use imports the MCP client, over a second of CPU). Numi's own
# modules are loaded too (`_preload`): none reads the environment as it loads (a test in
# tests/test_spawner.py holds them to that), so each child still takes every setting from its own.
PRELOAD = ("flask", "flask_sock", "werkzeug.serving", "peewee", "keyring", "websockets", "openai", "anthropic",
           "mcp", "mcp.client.streamable_http", "mcp_types", "watchdog.observers",
           "http.server", "sqlite3", "email.parser", "logging.handlers", "concurrent.futures")


def _preload() -> None:
    """Import the libraries and Numi once, and keep Numi's compiled modules for the next child."""
    import importlib
    import tempfile

    for name in PRELOAD:
        importlib.import_module(name)
    import pkgutil

    import backend

    for info in pkgutil.walk_packages(backend.__path__, "backend."):
        if not info.name.endswith("__main__"):  # that one runs the server as it loads
            importlib.import_module(info.name)
    # web/'s hash and page, which every server makes as it starts, made once for all of them.
    from backend.app import WEB_DIR
    from backend.web_assets import WebAssets

    WebAssets(WEB_DIR)
    # Numi's modules are compiled once for all children: where PYTHONDONTWRITEBYTECODE is
    # set (make test unsets it), into a folder of this process's rather than not at all.
    if sys.dont_write_bytecode and not sys.pycache_prefix:
        sys.pycache_prefix = tempfile.mkdtemp(prefix="numi-spawner-pyc-")
        sys.dont_write_bytecode = False


def _run_child(request: dict, out_fd: int) -> None:
    """In the forked child: become `python -m backend <args>` with the request's env and streams."""
    code: object = 1
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(devnull, 2)
        os.close(out_fd)
        os.close(devnull)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import time

        time.tzset()
        import runpy

        sys.argv = [request["main"], *request["args"]]
        runpy.run_module("backend", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        # As the interpreter's own exit would: wait for non-daemon threads, run atexit, flush.
        try:
            threading._shutdown()  # type: ignore[attr-defined]
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if code is None:
                code = 0
            elif not isinstance(code, int):
                code = 1
            os._exit(code)


def serve(path: str) -> None:
    _preload()
    # What was loaded is kept out of the collector's reach: otherwise each child's first full
    # collection walks all of it and writes to every object's header, copying the parent's
    # pages into the child (about a fifth of a server's CPU from start to stop).
    gc.freeze()
    # Forking is only safe while this process has one thread.
    assert threading.active_count() == 1, threading.enumerate()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wake-up fd hears it
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    try:
        while True:
            for key, _ in sel.select():
                if key.data == "stdin":
                    if not sys.stdin.buffer.read1(4096):
                        return
                elif key.data == "child":
                    os.read(wake_r, 4096)
                    _reap(children)
                else:
                    conn, _ = listener.accept()
                    msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 1)
                    request = json.loads(msg)
                    pid = os.fork()
                    if pid == 0:
                        signal.set_wakeup_fd(-1)
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        sel.close()
                        listener.close()
                        conn.close()
                        for other in children.values():
                            other.close()
                        os.close(wake_r)
                        os.close(wake_w)
                        _run_child(request, fds[0])
                    os.close(fds[0])
                    children[pid] = conn
                    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                    _reap(children)
    finally:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap(children, block=True)


def _reap(children: dict[int, socket.socket], block: bool = False) -> None:
    """Tell each finished child's client how it ended."""
    while children:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            except OSError:
                pass  # the client is gone
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
