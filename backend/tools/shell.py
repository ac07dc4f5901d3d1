"""The shell tool: one command line in the workspace, sandboxed, stoppable as a whole process tree.

The command runs confined where a sandbox can run (backend/tools/sandbox.py), in
its own session (POSIX) or process group (Windows), so Stop and the timeout end
everything it started, background children included; under bubblewrap the
command is also in a PID namespace of its own, which ends with it. When the
command itself finishes, whatever it left running is ended too: nothing outlives
the call unseen. Output is read as it comes and only its head and tail are kept,
so a command printing gigabytes costs ~the cap; what arrives is also reported as
progress while the command runs, for the tool row to show its last lines.
"""
from __future__ import annotations

import codecs
import math
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from backend.core.tools import Tool, report_progress
from backend.core.types import ToolSpec
from backend.private_files import USER_UMASK
from backend.tools import sandbox
from backend.tools.protected_paths import KINDS, MENTION
from backend.tools.protected_paths import NAMES as PROTECTED_NAMES
from backend.tools.sandbox import Launch

KILL_GRACE = 2.0  # seconds between the polite signal and the kill
_CHUNK = 64 * 1024
_WINDOWS = sys.platform == "win32"


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None when we ended it (timeout or Stop)
    duration_ms: int
    output: str  # stdout and stderr interleaved as written
    truncated: bool
    timed_out: bool
    cancelled: bool


def run_command(command: str, cwd: Path, *, timeout: float, output_cap: int, cancel,
                grace: float = KILL_GRACE, launch: Launch | None = None,
                on_output: Callable[[str], None] | None = None) -> CommandResult:
    """Run `command` in `cwd` (as `launch` says, else unconfined through the platform shell),
    ending its whole tree on timeout or cancel; `on_output` gets the output as it comes."""
    started = time.monotonic()
    if cancel.is_set():
        return CommandResult(None, 0, "", False, False, True)
    proc = _spawn(launch or sandbox.plain(command), cwd)
    sink = _HeadTail(output_cap)
    reader = threading.Thread(target=_pump, args=(proc.stdout, sink, on_output), name="shell-output", daemon=True)
    reader.start()
    exited, wake = threading.Event(), threading.Event()
    threading.Thread(target=_await_exit, args=(proc, exited, wake), name="shell-wait", daemon=True).start()
    unregister = cancel.on_cancel(wake.set)
    timed_out = cancelled = False
    try:
        deadline = started + timeout
        while not exited.is_set():
            if cancel.is_set():
                cancelled = True
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            wake.wait(remaining)
    finally:
        unregister()
        _end_tree(proc, exited, reader, grace)
    output, truncated = sink.text()
    killed = timed_out or cancelled
    return CommandResult(None if killed else proc.returncode, int((time.monotonic() - started) * 1000),
                         output, truncated, timed_out, cancelled)


def shell_tool(workspace_root: Path, timeout_default: float = 120, timeout_max: float = 600,
               output_cap: int = 30_000, *, data_dir: Path | None = None,
               network: Callable[[], bool] = lambda: False) -> Tool:
    """The `shell` tool, running commands in `workspace_root`; every call needs approval.

    Commands run sandboxed where a sandbox can start (`data_dir` hidden, the network as
    `network()` says at each call); elsewhere they run as they are, and the approval rules
    ask before each one (backend/turns/approvals.py).
    """
    root = Path(workspace_root)
    shell = "cmd.exe" if _WINDOWS else "/bin/sh"
    spec = ToolSpec(
        name="shell",
        description=(
            f"Run one command line with {shell} in the workspace folder and get its output "
            f"(stdout and stderr together) with the exit code. Stdin is closed, so interactive "
            f"programs fail instead of waiting. Beyond {output_cap} bytes only the beginning and "
            f"the end of the output are kept. The command is stopped after timeout_seconds "
            f"(default {_num(timeout_default)}, at most {_num(timeout_max)}); anything it leaves "
            f"running in the background is ended when it finishes. It runs in a sandbox where one "
            f"is available: only the workspace folder can be changed, the system's program folders "
            f"are read-only, the home folder and temporary folders outside the workspace are empty, "
            f"and the network is off unless the person turned it on. In the workspace, "
            f"{', '.join(PROTECTED_NAMES)} stay read-only, a missing one showing as an empty folder "
            f"(git commands that write to .git fail there): other programs run what they hold. "
            f"A person approves each call."),
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout_seconds": {"type": "number",
                                    "description": f"Stop the command after this many seconds "
                                                   f"(default {_num(timeout_default)}, "
                                                   f"at most {_num(timeout_max)})."},
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )

    def run(args: dict, cancel) -> str:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ValueError("shell needs a non-empty `command` string: the command line to run.")
        timeout = _timeout(args.get("timeout_seconds"), timeout_default, timeout_max)
        if not root.is_dir():
            raise ValueError(f"The workspace folder {root} does not exist, so no command can run.")
        confined = sandbox.status().available
        if confined:
            launch = sandbox.confine(command, root, data_dir=data_dir, network=bool(network()))
        else:
            launch = sandbox.plain(command)
        try:
            result = run_command(command, root, timeout=timeout, output_cap=output_cap, cancel=cancel,
                                 launch=launch, on_output=lambda text: report_progress(cancel, output=text))
        finally:
            launch.cleanup()
        said = describe(result, timeout)
        if confined and refused_protected(result):
            said += "\n" + PROTECTED_REFUSED
        return said

    return Tool(spec=spec, run=run, concurrent=False, needs_approval=True, trimmed_arguments=("command",))


# How a program reports a write the sandbox refused: a read-only mount (Linux), an empty folder
# holding a missing protected name's place, a mount point that cannot be moved, a sandbox-exec denial (macOS).
_WRITE_REFUSED = ("read-only file system", "is a directory", "device or resource busy", "operation not permitted")
PROTECTED_REFUSED = (
    f"[Numi's sandbox: this command met protected workspace files. {', '.join(PROTECTED_NAMES)} stay read-only "
    "in every mode and a missing one cannot be created (an empty read-only folder may hold its place while a "
    "command runs), "
    f"because other programs run what they hold for the person later, outside any sandbox ({KINDS}). Writes "
    "there fail, git commands that write to .git (commit, add, config, init) included. If such a change is "
    "wanted, ask the person to run the command themselves, outside Numi.]")


def refused_protected(result: CommandResult) -> bool:
    """Whether a sandboxed command's output shows it failed on a protected file (most likely a write)."""
    for line in result.output.splitlines():
        folded = line.casefold()
        if any(m in folded for m in _WRITE_REFUSED) and MENTION.search(line):
            return True
    return False


def describe(result: CommandResult, timeout: float) -> str:
    """The result as the model reads it: the output, then a footer with how it ended."""
    body = result.output or "(no output)"
    if not body.endswith("\n"):
        body += "\n"
    if result.timed_out:
        status = f"exit code none · timed out after {_num(timeout)} s and was stopped"
    elif result.cancelled:
        status = "exit code none · stopped by the person before it finished"
    elif result.exit_code is not None and result.exit_code < 0:
        status = f"exit code {result.exit_code} · killed by signal {-result.exit_code}"
    else:
        status = f"exit code {result.exit_code}"
    return f"{body}[{status} · {_duration(result.duration_ms)}]"


def _timeout(value, default: float, maximum: float) -> float:
    """The call's timeout in seconds, clamped to the maximum; ValueError for nonsense."""
    if value is None:
        return min(default, maximum)
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not seconds > 0 or math.isinf(seconds):  # also catches NaN
        raise ValueError(f"timeout_seconds must be a positive number of seconds "
                         f"(at most {_num(maximum)}); got {value!r}.")
    return min(seconds, maximum)


def _num(x: float) -> str:
    return f"{x:g}"


def _duration(ms: int) -> str:
    return f"{ms} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


# --- the process ---------------------------------------------------------------------

def _spawn(launch: Launch, cwd: Path) -> subprocess.Popen:
    common = dict(cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                  env=launch.env)
    if launch.windows_shell:  # untested here; CTRL_BREAK and taskkill /T need the group of its own
        return subprocess.Popen(launch.argv[0], shell=True,
                                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP, **common)
    # A new session makes the first process's pid the group id of everything it starts
    # outside a sandbox; inside bubblewrap, ending that process ends its PID namespace.
    # What it writes in the workspace is the person's: their umask, not Numi's private one.
    return subprocess.Popen(launch.argv, start_new_session=True, umask=USER_UMASK, **common)


def _await_exit(proc: subprocess.Popen, exited: threading.Event, wake: threading.Event) -> None:
    """Set `exited` once the shell ends, leaving it unreaped on POSIX."""
    try:
        if hasattr(os, "waitid"):
            # WNOWAIT keeps the shell a zombie until we reap it in _end_tree, so its
            # pid (the group id) cannot be reused while we may still signal the group.
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        else:  # Windows, and macOS before Python 3.13
            proc.wait()
    except ChildProcessError:
        pass  # reaped elsewhere; it has exited all the same
    finally:
        exited.set()
        wake.set()


def _end_tree(proc: subprocess.Popen, exited: threading.Event, reader: threading.Thread,
              grace: float) -> None:
    """End what is left of the command's tree, politely first, then reap the shell."""
    _signal_tree(proc, kill=False)
    # The pipe closes once every process holding it is gone: shell gone and EOF
    # means the tree heeded the polite signal (or had already finished).
    deadline = time.monotonic() + grace
    exited.wait(grace)
    reader.join(max(0.0, deadline - time.monotonic()))
    _signal_tree(proc, kill=True)  # anything ignoring SIGTERM, or not holding the pipe
    proc.wait()
    # Only a process that escaped the group (setsid, a daemon) can still hold the
    # pipe; its output is not waited for, and the reader thread ends with it.
    reader.join(grace)


def _signal_tree(proc: subprocess.Popen, *, kill: bool) -> None:
    try:
        if _WINDOWS:
            if kill:
                subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elif proc.poll() is None:
                proc.send_signal(signal.CTRL_BREAK_EVENT)
        else:
            os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
    except OSError:
        pass  # the group is already gone (or holds only the zombie shell)


# --- the output ----------------------------------------------------------------------

def _pump(stream, sink: "_HeadTail", on_output: Callable[[str], None] | None = None) -> None:
    """Read the pipe to its end into `sink`, a chunk at a time, handing each on as text."""
    # Incremental: a character split between two reads is decoded whole, once.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    try:
        while chunk := stream.read1(_CHUNK):
            sink.add(chunk)
            if on_output is not None and (text := decoder.decode(chunk)):
                try:
                    on_output(text)
                except Exception:
                    on_output = None  # reporting is for show: the output itself is still read whole
    except (OSError, ValueError):
        pass  # the pipe broke; what arrived is what there is
    finally:
        stream.close()


class _HeadTail:
    """The first and last bytes of a stream, and a count of what fell between."""

    def __init__(self, cap: int):
        self._head_cap = max(0, cap) // 2
        self._tail_cap = max(0, cap) - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._total += len(chunk)
            room = self._head_cap - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if not chunk or not self._tail_cap:
                return
            self._tail += chunk[-self._tail_cap:]
            excess = len(self._tail) - self._tail_cap
            if excess > 0:
                del self._tail[:excess]

    def text(self) -> tuple[str, bool]:
        """The kept output as text, and whether a middle part was left out."""
        with self._lock:
            head, tail, total = bytes(self._head), bytes(self._tail), self._total
        if total == len(head) + len(tail):
            return (head + tail).decode("utf-8", "replace"), False
        # Cut at character boundaries so the cut itself adds no replacement marks.
        head, tail = _without_split_end(head), _without_split_start(tail)
        left_out = total - len(head) - len(tail)
        head_text = head.decode("utf-8", "replace")
        sep = "" if not head_text or head_text.endswith("\n") else "\n"
        marker = f"{sep}[... {left_out} bytes of output left out here ...]\n"
        return head_text + marker + tail.decode("utf-8", "replace"), True


def _without_split_end(data: bytes) -> bytes:
    """`data` minus a UTF-8 character cut short at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # the lead byte of the last character
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data[:-back] if back < need else data
    return data


def _without_split_start(data: bytes) -> bytes:
    """`data` minus the continuation bytes of a character cut at its start."""
    skip = 0
    while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
        skip += 1
    return data[skip:]
