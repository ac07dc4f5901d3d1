"""API keys in the OS keyring, with an in-memory fallback for this run only.

Keys live under service "numi", username "provider:<id>" (a model provider's) or
"search:<backend>" (a web search backend's). When no usable
keyring exists (headless Linux without a Secret Service, a locked or broken
one), keys are held in a dict until the process exits: the person can still
chat, and nothing secret ever reaches the disk. A keyring that fails after the
probe degrades the same way instead of failing the request.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import threading

import keyring
import keyring.backend
import keyring.core
import keyring.errors

log = logging.getLogger(__name__)

SERVICE = "numi"
_PROBE_USER = "numi:probe"
_MEMORY_NOTE = "keys are kept in memory until Numi quits."


def _keyring_name() -> str:
    if sys.platform == "darwin":
        return "macOS Keychain"
    if sys.platform.startswith("win"):
        return "Windows Credential Manager"
    return "Secret Service"


def _fix(missing: bool) -> str:
    """What a person does so keys reach the system keyring (a sentence)."""
    if sys.platform == "darwin":
        step = "Unlock your login keychain in Keychain Access"
    elif sys.platform.startswith("win"):
        step = "Make sure the Credential Manager service is running"
    elif missing:
        step = ("Install a Secret Service keyring (gnome-keyring, or KWallet on KDE) and log in to your "
                "desktop session again so it runs and unlocks")
    else:
        step = "Unlock your keyring (log in to your desktop session again, or open Passwords and Keys)"
    return f"{step}, then choose “Check again” in Settings."


def _username(name: str, kind: str = "provider") -> str:
    return f"{kind}:{name}"


def _is_unusable(backend) -> bool:
    """True for keyring's do-nothing backends: fail, null, an empty chainer, anything below priority 1."""
    from keyring.backends import chainer, fail

    if isinstance(backend, fail.Keyring):
        return True
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return True
    return getattr(backend, "priority", 0) < 1


class KeyStore:
    """Thread-safe get/set/delete of keys; never logs or persists a key itself.

    A key belongs to a `kind` of service ("provider", "search") and its name there."""

    def __init__(self, backend=None):
        # `backend` lets tests hand in a keyring backend; None means keyring's own choice.
        self._backend = backend
        self._given_backend = backend is not None
        self._lock = threading.RLock()
        self._memory: dict[str, str] = {}  # keyring username -> key, without a keyring
        self._status: tuple[str | None, str | None] | None = None  # (cause, fix); None: not probed yet

    # -- status ---------------------------------------------------------------

    def status(self) -> tuple[bool, str | None]:
        """(available, reason): whether keys reach the OS keyring, and if not, why (a sentence)."""
        info = self.status_json()
        return info["available"], info["reason"]

    def status_json(self) -> dict:
        """`available`, `reason`, and, without a keyring, `cause` (a clause) and `fix` (a sentence)."""
        with self._lock:
            if self._status is None:
                self._status = self._probe()
            cause, fix = self._status
        if cause is None:
            return {"available": True, "reason": None, "cause": None, "fix": None}
        reason = f"{cause[0].upper()}{cause[1:]}; {_MEMORY_NOTE} {fix}"
        return {"available": False, "reason": reason, "cause": cause, "fix": fix}

    def recheck(self) -> dict:
        """Look for the system keyring again (installed or unlocked since); keys held in memory move into it."""
        with self._lock:
            if not self._given_backend:
                try:
                    with contextlib.suppress(KeyError):  # KeyError: nothing cached yet
                        keyring.backend.get_all_keyring.reset()  # keyring caches what it found at first
                    keyring.core.init_backend()
                except Exception as exc:  # detection can raise anything from a plugin
                    log.warning("looking for the system keyring again failed (%s)", type(exc).__name__)
                self._backend = None
            self._status = self._probe()
            if self._status[0] is None:
                for username, key in list(self._memory.items()):
                    try:
                        self._backend.set_password(SERVICE, username, key)
                    except Exception as exc:
                        self._degrade(exc)
                        break
                    del self._memory[username]
        return self.status_json()

    def _probe(self) -> tuple[str | None, str | None]:
        """(cause, fix): None, None when the keyring works."""
        try:
            backend = self._backend if self._backend is not None else keyring.get_keyring()
            self._backend = backend
            unusable = _is_unusable(backend)
        except Exception as exc:  # keyring's detection can raise anything from a plugin
            return self._broken(exc)
        if unusable:
            return f"no system keyring ({_keyring_name()}) was found", _fix(missing=True)
        try:
            backend.get_password(SERVICE, _PROBE_USER)
        except Exception as exc:
            return self._broken(exc)
        return None, None

    @staticmethod
    def _broken(exc: BaseException) -> tuple[str, str]:
        # Only the exception type: messages from some backends echo what they were asked.
        log.warning("system keyring unusable (%s); keeping keys in memory", type(exc).__name__)
        return (f"the system keyring ({_keyring_name()}) could not be used ({type(exc).__name__})",
                _fix(missing=False))

    def _degrade(self, exc: BaseException) -> None:
        self._status = self._broken(exc)

    def _use_keyring(self) -> bool:
        with self._lock:
            if self._status is None:
                self._status = self._probe()
            return self._status[0] is None

    # -- keys -----------------------------------------------------------------

    def get(self, name: str, kind: str = "provider") -> str | None:
        username = _username(name, kind)
        with self._lock:
            if username in self._memory:
                return self._memory[username]
            if not self._use_keyring():
                return None
            try:
                return self._backend.get_password(SERVICE, username)
            except Exception as exc:
                self._degrade(exc)
                return None

    def set(self, name: str, key: str, kind: str = "provider") -> None:
        if not isinstance(key, str) or not key:
            raise ValueError("an API key must be a non-empty string")
        username = _username(name, kind)
        with self._lock:
            if self._use_keyring():
                try:
                    self._backend.set_password(SERVICE, username, key)
                    self._memory.pop(username, None)
                    return
                except Exception as exc:
                    self._degrade(exc)
            self._memory[username] = key

    def delete(self, name: str, kind: str = "provider") -> None:
        """Forget the key wherever it is; deleting a key that is not there is fine."""
        username = _username(name, kind)
        with self._lock:
            self._memory.pop(username, None)
            if not self._use_keyring():
                return
            try:
                self._backend.delete_password(SERVICE, username)
            except keyring.errors.PasswordDeleteError:
                pass
            except Exception as exc:
                self._degrade(exc)

    def has(self, name: str, kind: str = "provider") -> bool:
        return self.get(name, kind) is not None
