"""Where the shell's commands run: confined by bubblewrap (Linux) or sandbox-exec (macOS), or not at all.

A confined command sees the system's program folders read-only and the workspace
writable, but for what other programs later run on the person's behalf
(backend/tools/protected_paths.py: `.git`, `.envrc`, editor settings), which stays
read-only. The rest of the disk (other users' homes, /srv, /mnt, the home folder but
the workspace), the shared temp folders with other programs' sockets, the per-user
runtime folder (/run/user/…: the keyring's D-Bus session bus), Numi's data folder and
Numi's own processes are out of its sight, and its environment is built from nothing
(PATH, HOME, LANG, TERM). The network is off unless the setting turns it on. Whether
a sandbox can start here is probed once per configuration; where none can, the caller
must say so and ask before every command (backend/turns/approvals.py).
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

from backend.tools.protected_paths import NAMES as PROTECTED_NAMES
from backend.tools.protected_paths import RESERVED, find, protected_part

BWRAP_ENV = "NUMI_BWRAP"  # the bubblewrap binary to use (tests point it at a missing one)
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
PROBE_TIMEOUT = 10.0
# The system folders a command sees (read-only), where they exist: programs, their libraries and
# settings. A link among them (/bin -> usr/bin) is made as the same link.
SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix")
PLACEHOLDERS = "sandbox-placeholders.txt"  # in the data dir: placeholders a crash left behind
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
    ws = _real(workspace)
    journal = Path(data_dir) / PLACEHOLDERS if data_dir is not None and os.path.isdir(data_dir) else None
    taken = [] if protected_part(ws.parts) else _placeholders.take(ws, journal)
    try:
        argv = bwrap_argv(bwrap_path(), ws, data_dir=data_dir, network=network, protected=find(ws))
    except BaseException:
        _placeholders.give_back(taken, journal)
        raise
    return Launch(argv + ["/bin/sh", "-c", command], command_env(),
                  cleanup=lambda: _placeholders.give_back(taken, journal))


class _Placeholders:
    """Empty folders standing in for missing reserved names (`.git`, `.envrc`, …) at a workspace's
    top while commands run there, bound read-only so that no command can create the real thing.

    An empty `.git` folder is no repository to git, which looks on in the folders above, as
    without it. Commands running at once in one workspace share them; each is removed when
    the last of them ends, and only while empty (rmdir), so nothing put there from outside
    is lost. The journal lists the live ones, for the next command to remove what a crash
    left behind.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._users: dict[Path, int] = {}

    def take(self, ws: Path, journal: Path | None) -> list[Path]:
        with self._lock:
            self._sweep(journal)
            taken = []
            for name in RESERVED:
                path = ws / name
                if path not in self._users:
                    if os.path.lexists(path):
                        continue  # the real one, bound read-only as it is found
                    try:
                        os.mkdir(path)
                    except OSError:
                        continue  # a workspace we cannot write to: nor can the command
                self._users[path] = self._users.get(path, 0) + 1
                taken.append(path)
            self._write(journal)
            return taken

    def give_back(self, taken: list[Path], journal: Path | None) -> None:
        with self._lock:
            for path in taken:
                self._users[path] -= 1
                if not self._users[path]:
                    del self._users[path]
                    _remove_if_empty(path)
            if taken:
                self._write(journal)

    def _sweep(self, journal: Path | None) -> None:
        try:
            listed = journal.read_text("utf-8").splitlines() if journal is not None else []
        except OSError:
            listed = []
        for line in listed:
            if line and Path(line) not in self._users and protected_part([Path(line).name]):
                _remove_if_empty(Path(line))

    def _write(self, journal: Path | None) -> None:
        if journal is None:
            return
        try:
            if self._users:
                journal.write_text("".join(f"{p}\n" for p in self._users), "utf-8")
            else:
                journal.unlink(missing_ok=True)
        except OSError:
            pass  # only a crash's leftovers depend on it


def _remove_if_empty(path: Path) -> None:
    try:
        os.rmdir(path)  # fails on anything but an empty folder
    except OSError:
        pass


_placeholders = _Placeholders()


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


def system_mounts() -> tuple[list[str], list[Path]]:
    """bubblewrap's arguments showing the system folders read-only, and the real folders they show."""
    argv: list[str] = []
    shown: list[Path] = []
    for name in SYSTEM_ROOTS + ("/usr/local",):  # /usr/local is a link to /var/… on some systems
        if not os.path.lexists(name):
            continue
        if os.path.islink(name) and name in SYSTEM_ROOTS:
            argv += ["--symlink", os.readlink(name), name]
        real = _real(name)
        if real.is_dir() and real != Path(real.anchor) and not any(real.is_relative_to(s) for s in shown):
            argv += ["--ro-bind", str(real), str(real)]
            shown.append(real)
    return argv, shown


def bwrap_argv(binary: str, workspace: Path, *, data_dir: Path | None, network: bool,
               protected=()) -> list[str]:
    """bubblewrap's arguments up to the command: what the sandbox sees, in mount order (later mounts win).

    `protected`: real paths in the workspace bound read-only over it."""
    ws = _real(workspace)
    system, shown = system_mounts()
    argv = [binary, *system, "--dev", "/dev", "--proc", "/proc"]
    hidden = hidden_roots()
    for root in hidden:
        argv += ["--tmpfs", str(root)]  # empty, writable, thrown away: HOME and the temp folders

    def visible(path: Path) -> bool:
        return any(path.is_relative_to(r) for r in shown) and not any(path.is_relative_to(r) for r in hidden)

    # A resolver configuration outside what is shown (systemd-resolved's in /run, WSL's in /mnt)
    # is put back read-only, or names would not resolve with the network on.
    resolv = _real("/etc/resolv.conf")
    if network and resolv.is_file() and not visible(resolv):
        argv += ["--ro-bind", str(resolv), str(resolv)]
    # A workspace inside a protected folder (a .git) is read-only as a whole.
    argv += ["--ro-bind" if protected_part(ws.parts) else "--bind", str(ws), str(ws)]
    for path in protected:
        # The top's were just found or made: they must hold. A nested one may be gone by now.
        argv += ["--ro-bind" if path.parent == ws else "--ro-bind-try", str(path), str(path)]
    bus = _session_bus_socket()
    if bus is not None and (visible(bus) or bus.is_relative_to(ws)):
        argv += ["--ro-bind", "/dev/null", str(bus)]  # a session bus socket the command could see
    if data_dir is not None and os.path.isdir(data_dir):
        data = _real(data_dir)
        # Mounted last, so the data dir stays hidden even inside the workspace.
        if data.is_relative_to(ws) or visible(data):
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


def _any_case(name: str) -> str:
    """A name as a regex matching it in any letter case: `.git` -> `\\.[gG][iI][tT]` (names hold
    only letters, dots and dashes)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else "\\." if c == "." else c for c in name)


# A protected name as a whole component anywhere in a path. It holds no path of the person's,
# so it is written as a raw regex literal with nothing to escape.
PROTECTED_REGEX = "/(" + "|".join(_any_case(n) for n in PROTECTED_NAMES) + ")(/|$)"


def seatbelt_profile(workspace: Path, *, data_dir: Path | None, tmp: Path, network: bool,
                     home: Path | None) -> str:
    """The sandbox-exec profile: deny by default; the workspace (but for what other programs run on
    the person's behalf, at any depth, existing or not) and a private temp folder writable; the
    rest of the disk readable except the homes (/Users), other volumes, the shared temp folders
    and the data dir; no keychain (its services are never looked up); the network only when on."""
    ws, tmp = _sbpl(_real(workspace)), _sbpl(_real(tmp))
    never = [f"(subpath {_sbpl(_real(data_dir))})"] if data_dir is not None else []
    unreadable = never + [f"(subpath {_sbpl(p)})" for p in
                          ([home] if home is not None else [])
                          + [Path("/Users"), Path("/Volumes"), Path("/private/tmp"), Path("/private/var/folders")]]
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
        f"(allow file-read* (require-all (subpath {ws}){not_never}))",
        # Matched by name, so a protected file the workspace does not have yet cannot be created either.
        f'(allow file-write* (require-all (subpath {ws}){not_never} (require-not (regex #"{PROTECTED_REGEX}"))))',
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
