"""Where the shell's commands run: confined by bubblewrap (Linux) or sandbox-exec (macOS), or not at all.

A confined command sees the system read-only and the workspace writable; the home
folder (but the workspace), the shared temp folders with other programs' sockets,
the per-user runtime folder (/run/user/…: the keyring's D-Bus session bus), Numi's
data folder and Numi's own processes are out of its sight, and its environment is
built from nothing (PATH, HOME, LANG, TERM). The network is off unless the setting
turns it on. Whether a sandbox can start here is probed once per configuration; where
none can, the caller must say so and ask before every command (backend/turns/approvals.py).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

BWRAP_ENV = "NUMI_BWRAP"  # the bubblewrap binary to use (tests point it at a missing one)
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
PROBE_TIMEOUT = 10.0
_WINDOWS = sys.platform == "win32"
_MACOS = sys.platform == "darwin"


@dataclass(frozen=True)
class Status:
    available: bool
    kind: str | None  # "bubblewrap" or "sandbox-exec" when available
    reason: str | None  # why there is none, a sentence

    def as_json(self) -> dict:
        return {"available": self.available, "kind": self.kind, "reason": self.reason}


@dataclass
class Launch:
    """How to start one command: the argv, its environment, and what to remove afterwards."""
    argv: list[str]
    env: dict[str, str]
    cleanup: Callable[[], None] = field(default=lambda: None)
    windows_shell: bool = False  # argv[0] is a command line for cmd.exe (Popen's shell=True)


# --- the environment ------------------------------------------------------------------

def command_env() -> dict[str, str]:
    """The whole environment a command gets: nothing of Numi's but where programs are and the language.

    Numi's environment holds what a command must not learn: the keyring's session bus
    (DBUS_SESSION_BUS_ADDRESS), API keys and tokens, Numi's own NUMI_* settings.
    """
    env = {
        "PATH": os.environ.get("PATH") or DEFAULT_PATH,  # where programs are: no secret
        "LANG": os.environ.get("LANG") or os.environ.get("LC_ALL") or "C.UTF-8",
        "TERM": "dumb",  # output goes to a pipe, not a terminal
    }
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if home and home != "~":
        env["HOME"] = home
    if _WINDOWS:  # cmd.exe and most programs need these to start at all
        for name in ("SYSTEMROOT", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE"):
            if os.environ.get(name):
                env[name] = os.environ[name]
    return env


def plain(command: str) -> Launch:
    """The command unconfined, through the platform shell (where no sandbox can run)."""
    if _WINDOWS:
        return Launch([command], command_env(), windows_shell=True)
    return Launch(["/bin/sh", "-c", command], command_env())


# --- whether a sandbox can run here -----------------------------------------------------

_probed: dict[tuple, Status] = {}
_probe_lock = threading.Lock()


def bwrap_path() -> str | None:
    configured = os.environ.get(BWRAP_ENV)
    return configured if configured else shutil.which("bwrap")


def status() -> Status:
    """Whether commands can be confined here; probed once per configuration (by starting one)."""
    if _WINDOWS:
        return Status(False, None, "Numi has no sandbox for the shell on Windows.")
    if _MACOS:
        key: tuple = ("sandbox-exec",)
    elif sys.platform.startswith("linux"):
        key = ("bwrap", bwrap_path())
    else:
        return Status(False, None, f"Numi has no sandbox for the shell on this system ({sys.platform}).")
    with _probe_lock:
        if key not in _probed:
            _probed[key] = _probe_sandbox_exec() if _MACOS else _probe_bwrap(key[1])
        return _probed[key]


def _probe_bwrap(binary: str | None) -> Status:
    if not binary:
        return Status(False, None, "bubblewrap (bwrap) is not installed, so the shell cannot be confined. "
                                   "Install it (on Debian or Ubuntu: apt install bubblewrap) and restart Numi.")
    if not os.access(binary, os.X_OK):
        return Status(False, None, f"bubblewrap was not found at {binary}, so the shell cannot be confined. "
                                   f"Install it (on Debian or Ubuntu: apt install bubblewrap) and restart Numi.")
    with tempfile.TemporaryDirectory(prefix="numi-sandbox-probe-") as ws:
        argv = bwrap_argv(binary, Path(ws), data_dir=None, network=False) + ["/bin/sh", "-c", "true"]
        failure = _run_probe(argv)
    if failure is None:
        return Status(True, "bubblewrap", None)
    return Status(False, None, f"bubblewrap could not start a sandbox here ({failure}), so the shell cannot be "
                               f"confined. It needs user namespaces, which this system may have turned off.")


def _probe_sandbox_exec() -> Status:
    if not os.access(SANDBOX_EXEC, os.X_OK):
        return Status(False, None, f"{SANDBOX_EXEC} was not found, so the shell cannot be confined.")
    failure = _run_probe([SANDBOX_EXEC, "-p", "(version 1)(allow default)", "/usr/bin/true"])
    if failure is None:
        return Status(True, "sandbox-exec", None)
    return Status(False, None, f"sandbox-exec could not start a sandbox here ({failure}), so the shell "
                               f"cannot be confined.")


def _run_probe(argv: list[str]) -> str | None:
    """None when `argv` ran and exited 0, else what went wrong, briefly."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT,
                              env=command_env())
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit code {done.returncode}"


# --- confining one command --------------------------------------------------------------

def confine(command: str, workspace: Path, *, data_dir: Path | None, network: bool) -> Launch:
    """The sandboxed launch of `command` in `workspace`; RuntimeError where status() says none can run."""
    st = status()
    if not st.available:
        raise RuntimeError(st.reason)
    if st.kind == "sandbox-exec":
        return _sandbox_exec_launch(command, workspace, data_dir=data_dir, network=network)
    argv = bwrap_argv(bwrap_path(), workspace, data_dir=data_dir, network=network)
    return Launch(argv + ["/bin/sh", "-c", command], command_env())


def _real(path) -> Path:
    return Path(os.path.realpath(path))


def _home() -> Path | None:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~" or not os.path.isdir(home):
        return None
    real = _real(home)
    return None if real == Path(real.anchor) else real


def hidden_roots() -> list[Path]:
    """Folders a command gets an empty, private tmpfs for (Linux): where secrets and other programs' sockets are."""
    roots = [Path("/tmp"), Path("/var/tmp"), Path("/run")]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        roots.append(_real(runtime))
    home = _home()
    if home is not None:
        roots.append(home)
    out = []
    for root in roots:
        real = _real(root)
        # /var/run is usually a link to /run: one mount serves both.
        if os.path.isdir(real) and real not in out and real != Path(real.anchor):
            out.append(real)
    return out


def bwrap_argv(binary: str, workspace: Path, *, data_dir: Path | None, network: bool) -> list[str]:
    """bubblewrap's arguments up to the command: what the sandbox sees, in mount order (later mounts win)."""
    ws = _real(workspace)
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = hidden_roots()
    for root in hidden:
        argv += ["--tmpfs", str(root)]
    # A resolver configuration that lives under a hidden folder (systemd-resolved's, in /run)
    # is put back read-only, or names would not resolve with the network on.
    resolv = _real("/etc/resolv.conf")
    if network and resolv.is_file() and any(resolv.is_relative_to(r) for r in hidden):
        argv += ["--ro-bind", str(resolv), str(resolv)]
    argv += ["--bind", str(ws), str(ws)]
    bus = _session_bus_socket()
    if bus is not None and not any(bus.is_relative_to(r) for r in hidden) and not bus.is_relative_to(ws):
        argv += ["--ro-bind", "/dev/null", str(bus)]  # a session bus socket outside the hidden folders
    if data_dir is not None and os.path.isdir(data_dir):
        data = _real(data_dir)
        # Mounted last, so the data dir stays hidden even inside the workspace.
        if data.is_relative_to(ws) or not any(data.is_relative_to(r) for r in hidden):
            argv += ["--tmpfs", str(data)]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    # --new-session: no TIOCSTI into a terminal of ours; --die-with-parent: nothing outlives Numi.
    argv += ["--die-with-parent", "--new-session", "--chdir", str(ws), "--"]
    return argv


def _session_bus_socket() -> Path | None:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    for part in address.split(";"):
        kind, _, params = part.partition(":")
        if kind != "unix":
            continue
        for param in params.split(","):
            name, _, value = param.partition("=")
            if name == "path" and value:
                return _real(value)
    return None


# --- macOS --------------------------------------------------------------------------------

def _sbpl(text) -> str:
    """A path as an SBPL string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(workspace: Path, *, data_dir: Path | None, tmp: Path, network: bool,
                     home: Path | None) -> str:
    """The sandbox-exec profile: deny by default; the workspace and a private temp folder writable;
    the rest of the disk readable except the home folder, the shared temp folders and the data dir;
    no keychain (its services are never looked up); the network only when on."""
    ws, tmp = _sbpl(_real(workspace)), _sbpl(_real(tmp))
    never = [f"(subpath {_sbpl(_real(data_dir))})"] if data_dir is not None else []
    unreadable = never + [f"(subpath {_sbpl(p)})" for p in
                          ([home] if home is not None else []) + [Path("/private/tmp"), Path("/private/var/folders")]]
    not_never = "".join(f" (require-not {n})" for n in never)
    not_unreadable = "".join(f" (require-not {n})" for n in unreadable)
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow process-info* (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow user-preference-read)",
        "(allow ipc-posix-sem ipc-posix-shm)",
        # Looking up users (getpwuid) goes through this service; the keychain's are never allowed.
        '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
        f"(allow file-read-metadata (require-all (subpath \"/\"){not_never}))",
        f"(allow file-read* (require-all (subpath \"/\"){not_unreadable}))",
        f"(allow file-read* file-write* (require-all (subpath {ws}){not_never}))",
        f"(allow file-read* file-write* (subpath {tmp}))",
        '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero"))',
    ]
    if network:
        lines += [
            '(allow network-outbound (remote ip "*:*"))',
            '(allow network-inbound (local ip "*:*"))',
            '(allow network-bind (local ip "*:*"))',
            "(allow system-socket)",
            '(allow network-outbound (literal "/private/var/run/mDNSResponder"))',  # name lookups
            '(allow mach-lookup (global-name "com.apple.SystemConfiguration.configd")'
            ' (global-name "com.apple.SystemConfiguration.DNSConfiguration")'
            ' (global-name "com.apple.trustd.agent"))',
        ]
    return "\n".join(lines) + "\n"


def _sandbox_exec_launch(command: str, workspace: Path, *, data_dir: Path | None, network: bool) -> Launch:
    tmp = Path(tempfile.mkdtemp(prefix="numi-shell-"))
    profile = seatbelt_profile(workspace, data_dir=data_dir, tmp=tmp, network=network, home=_home())
    env = command_env()
    env["TMPDIR"] = str(tmp)  # the shared temp folders are out of reach: this one is the command's own
    return Launch([SANDBOX_EXEC, "-p", profile, "/bin/sh", "-c", command], env,
                  cleanup=lambda: shutil.rmtree(tmp, ignore_errors=True))
