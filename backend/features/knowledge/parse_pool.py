"""Reading files in long-lived worker processes, each file within a time and a memory limit."""
from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
from typing import Any

from backend.features.knowledge.types import Parsed, Unreadable

WORKER_NAME = "numi-knowledge-reader"
START_TIMEOUT_S = 60.0

# A worker imports only what reading needs. Spawn would import this module's packages to find a
# function of it, and the feature's __init__ brings the routes, the service and the database (a
# third of a second and tens of MB in every worker): the worker's first code registers the packages
# bare, then imports the readers' modules alone.
_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGES = (("backend.features", os.path.dirname(_HERE)), ("backend.features.knowledge", _HERE))
_BOOTSTRAP = """
import sys, types
for name, path in packages:
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__path__ = [path]
from backend.features.knowledge.parse_pool import _serve
_serve(conn, memory_mb)
"""


class PoolClosed(RuntimeError):
    """The pool was closed before or while it read the file."""


class ParsePool:
    """Reads files in up to `workers` processes at once; a file that passes `timeout_s` or `memory_mb` costs only
    itself (`memory_mb` limits each worker's address space where the system allows it)."""

    def __init__(self, workers: int = 2, timeout_s: float = 30.0, memory_mb: int = 512):
        if workers < 1:
            raise ValueError("A parse pool needs at least one worker.")
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        # Not fork: the app has threads, and a forked child could inherit a lock some thread held.
        self._context = multiprocessing.get_context("spawn")
        # Slots: a live worker, or None for one not started yet (or replaced). Last in, first out,
        # so a warm worker is reused before a new one is started.
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(workers):
            self._idle.put(None)
        self._live: set[_Worker] = set()
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._closed = False

    def read(self, path: str, name: str | None = None) -> Parsed:
        """The file read in a worker process, or Unreadable with the reason; safe to call from many threads."""
        worker: _Worker | None = self._idle.get()
        try:
            if self._closed:
                raise PoolClosed("The file reader was closed.")
            if worker is not None and worker.process.exitcode is not None:
                self._discard(worker)  # it died while idle (killed from outside): not this file's doing
                worker = None
            if worker is None:
                worker = self._start()
            status, value = worker.ask((path, name), self.timeout_s)
            if status == "ok":
                return value
            if status == "unreadable":
                raise Unreadable(value)
            if status == "error":
                raise Unreadable(f"The reader failed on it ({value}); it was skipped.")
            # The worker hangs, ran out of memory or died: a fresh one takes the next file.
            self._discard(worker)
            worker = None
            if self._closed:
                raise PoolClosed("The file reader was closed while it read the file.")
            if status == "timeout":
                raise Unreadable(f"Reading it took longer than {self.timeout_s:g} s; it was skipped.")
            if status == "memory":
                raise Unreadable(f"Reading it needed more memory than the {self.memory_mb} MB allowed; it was skipped.")
            raise Unreadable("The reader crashed while reading it (it may have needed more than the "
                             f"{self.memory_mb} MB of memory allowed); it was skipped.")
        finally:
            if worker is not None and self._closed:
                worker.release()
                worker = None
            self._idle.put(worker)

    def close(self) -> None:
        """Stop every worker process (a read under way ends with PoolClosed) and reap them all."""
        with self._lock:
            self._closed = True
            live = list(self._live)
            self._live.clear()
        for worker in live:
            worker.kill()
        # Idle workers have no reader to release them, so the pool does; their slots go back empty.
        emptied = 0
        while True:
            try:
                slot = self._idle.get_nowait()
            except queue.Empty:
                break
            if slot is not None:
                slot.release()
            emptied += 1
        for _ in range(emptied):
            self._idle.put(None)

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _start(self) -> _Worker:
        with self._starting:
            worker = _Worker(self._context, self.memory_mb)
        with self._lock:
            closed = self._closed
            if not closed:
                self._live.add(worker)
        if closed:
            worker.release()
            raise PoolClosed("The file reader was closed.")
        if not worker.ready(START_TIMEOUT_S):
            self._discard(worker)
            if self._closed:
                raise PoolClosed("The file reader was closed.")
            raise RuntimeError("Numi could not start a process to read files; restart Numi and try again.")
        return worker

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._live.discard(worker)
        worker.release()


class _Worker:
    """One worker process and its end of the pipe; used by one thread at a time."""

    def __init__(self, context, memory_mb: int):
        self.conn, child = context.Pipe()
        namespace = {"packages": _PACKAGES, "conn": child, "memory_mb": memory_mb}
        self.process = context.Process(target=exec, args=(_BOOTSTRAP, namespace), name=WORKER_NAME, daemon=True)
        self.process.start()
        child.close()
        self._lock = threading.Lock()
        self._released = False

    def ready(self, timeout_s: float) -> bool:
        try:
            return self.conn.poll(timeout_s) and self.conn.recv() == ("ready", None)
        except (EOFError, OSError):
            return False

    def ask(self, job: tuple[str, str | None], timeout_s: float) -> tuple[str, Any]:
        """Send one file; its outcome, or ("timeout", None) or ("died", None)."""
        try:
            self.conn.send(job)
            if not self.conn.poll(timeout_s):
                return "timeout", None
            return self.conn.recv()
        except (EOFError, OSError):
            return "died", None

    def kill(self) -> None:
        """Kill the process and reap it; any thread may, at any time."""
        with self._lock:
            if not self._released:
                self._reap()

    def release(self) -> None:
        """Kill the process and free the pipe and process handles; only the worker's holder calls this."""
        with self._lock:
            if not self._released:
                self._reap()
                self.conn.close()
                self.process.close()
                self._released = True

    def _reap(self) -> None:
        if self.process.exitcode is None:
            self.process.kill()
        self.process.join()


def _serve(conn, memory_mb: int) -> None:
    """A worker process's life: limit its memory, then read each file it is sent until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the app's to handle; the app then closes the pool
    _limit_memory(memory_mb)
    if hasattr(os, "nice"):
        # Background work: a reply streaming meanwhile gets the processor first.
        os.nice(10)
    from backend.features.knowledge.readers import read_file

    _preload()
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            outcome: tuple[str, object] = ("ok", read_file(*job))
        except Unreadable as exc:
            outcome = ("unreadable", exc.reason)
        except MemoryError:
            outcome = ("memory", None)
        except Exception as exc:
            outcome = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(outcome)
        except MemoryError:
            outcome = ("memory", None)
            conn.send(outcome)
        if outcome[0] == "memory":
            return  # memory may be left fragmented or half-freed; the pool starts a fresh worker


def _limit_memory(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:
        return  # Windows: no rlimits; the time limit still holds
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass  # some systems (macOS) refuse an address-space limit; the time limit still holds


def _preload() -> None:
    """Import the readers' libraries before the first file, so a file's time limit is spent reading it."""
    for module in ("pypdfium2", "docx", "lxml.html"):
        try:
            __import__(module)
        except ImportError:
            pass
