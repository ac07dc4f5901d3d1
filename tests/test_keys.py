"""API keys: the OS keyring when there is one, memory for this run when not, never the disk or a log."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import keyring.backend
import keyring.errors
import pytest
from keyring.backends import chainer, fail, null

from backend.keys import KeyStore
from backend.providers.key_check import key_problem

SECRET = "sk-" + "test-7f3a9c1e5b2d4f6a8c0e"  # built, so no scanner mistakes it for a real key


class DictKeyring(keyring.backend.KeyringBackend):
    """A working keyring that keeps secrets in a dict (what a Secret Service would do)."""
    priority = 1

    def __init__(self):
        super().__init__()
        self.secrets = {}

    def get_password(self, service, username):
        return self.secrets.get((service, username))

    def set_password(self, service, username, password):
        self.secrets[(service, username)] = password

    def delete_password(self, service, username):
        if self.secrets.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("not found")


class LockedKeyring(DictKeyring):
    def get_password(self, service, username):
        raise keyring.errors.KeyringLocked("Failed to unlock the collection!")


class BreaksOnWrite(DictKeyring):
    def set_password(self, service, username, password):
        raise keyring.errors.PasswordSetError("the daemon went away")


class EmptyChainer(chainer.ChainerBackend):
    backends = []


# -- KeyStore on its own ----------------------------------------------------------

@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring(), EmptyChainer()])
def test_no_usable_keyring_keeps_keys_in_memory(backend):
    keys = KeyStore(backend)
    available, reason = keys.status()
    assert available is False
    assert reason.startswith("No system keyring (Secret Service) was found; keys are kept in memory until Numi quits. ")
    info = keys.status_json()
    assert info["cause"] == "no system keyring (Secret Service) was found"
    assert "gnome-keyring" in info["fix"] and "Check again" in info["fix"] and info["fix"] in reason
    assert keys.get("p1") is None and not keys.has("p1")
    keys.set("p1", SECRET)
    assert keys.get("p1") == SECRET and keys.has("p1")
    keys.delete("p1")
    keys.delete("p1")  # deleting twice is fine
    assert keys.get("p1") is None and not keys.has("p1")


def test_working_keyring_is_used():
    backend = DictKeyring()
    keys = KeyStore(backend)
    assert keys.status() == (True, None)
    keys.set("p1", SECRET)
    assert backend.secrets == {("numi", "provider:p1"): SECRET}
    assert keys.get("p1") == SECRET and keys.has("p1")
    assert KeyStore(backend).get("p1") == SECRET  # a new run finds it again
    keys.delete("p1")
    assert backend.secrets == {} and not keys.has("p1")
    keys.delete("p1")


def test_keyring_that_fails_the_probe_falls_back_with_a_reason():
    keys = KeyStore(LockedKeyring())
    available, reason = keys.status()
    assert available is False
    assert "KeyringLocked" in reason and "in memory until Numi quits" in reason and "Unlock" in reason
    keys.set("p1", SECRET)
    assert keys.get("p1") == SECRET


def test_keyring_that_breaks_later_degrades_to_memory():
    backend = BreaksOnWrite()
    keys = KeyStore(backend)
    assert keys.status()[0] is True
    keys.set("p1", SECRET)
    assert keys.get("p1") == SECRET and backend.secrets == {}
    available, reason = keys.status()
    assert available is False and "PasswordSetError" in reason
    assert SECRET not in reason


class UnlockableKeyring(DictKeyring):
    """Locked until `unlocked` is set, as a keyring the person unlocks while Numi runs."""
    unlocked = False

    def get_password(self, service, username):
        if not self.unlocked:
            raise keyring.errors.KeyringLocked("locked")
        return super().get_password(service, username)


def test_check_again_finds_an_unlocked_keyring_and_moves_memory_keys_into_it():
    backend = UnlockableKeyring()
    keys = KeyStore(backend)
    keys.set("p1", SECRET)
    assert keys.status()[0] is False and backend.secrets == {}
    assert keys.recheck()["available"] is False  # still locked: nothing changes
    backend.unlocked = True
    assert keys.recheck() == {"available": True, "reason": None, "cause": None, "fix": None}
    assert backend.secrets == {("numi", "provider:p1"): SECRET}  # survives a restart now
    assert KeyStore(backend).get("p1") == SECRET


def test_empty_key_is_refused():
    with pytest.raises(ValueError):
        KeyStore(fail.Keyring()).set("p1", "")


BAD_KEYS = ["sk-abc\x00def", "sk-abc\r\nX-Injected: 1", "sk-abc\ndef", "sk-ab\u00e7def", "sk-abc\x1bdef",
            "sk-abc def", "sk-\U0001F511"]


def test_only_printable_ascii_without_spaces_is_a_key():
    assert [key for key in BAD_KEYS if key_problem(key) is None] == []
    assert key_problem(SECRET) is None and key_problem("sk-ant-api03-AZaz09_-.~+/=") is None


def test_keystore_is_thread_safe():
    keys = KeyStore(fail.Keyring())
    start, errors = threading.Barrier(8), []

    def worker(n: int):
        try:
            start.wait()
            for i in range(200):
                pid = f"p{n}-{i % 5}"
                keys.set(pid, f"k{n}-{i}")
                assert keys.get(pid) == f"k{n}-{i}"
                keys.delete(pid)
                assert not keys.has(pid)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_keys_are_never_logged(caplog):
    caplog.set_level("DEBUG")
    for backend in (fail.Keyring(), LockedKeyring(), BreaksOnWrite()):
        keys = KeyStore(backend)
        keys.set("p1", SECRET)
        keys.get("p1")
        keys.delete("p1")
    assert SECRET not in caplog.text


# -- through the server (the fail backend: conftest sets it) ---------------------

def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_server_without_keyring(server, api):
    bodies = []

    def call(method, path, body=None):
        r = api.request(method, path, body)
        bodies.append(json.dumps(r.body) if not isinstance(r.body, bytes) else r.body.decode())
        return r

    keyring_status = call("GET", "/api/settings").body["keyring"]
    assert keyring_status["available"] is False
    assert "No system keyring" in keyring_status["reason"] and keyring_status["reason"].endswith(".")
    assert keyring_status["cause"] == "no system keyring (Secret Service) was found"
    checked = call("POST", "/api/settings/keyring/check")
    assert checked.status == 200 and checked.body["keyring"] == keyring_status
    assert api.request("POST", "/api/settings/keyring/check", headers={"Authorization": ""}).status == 401
    p = call("POST", "/api/providers", {"kind": "openai", "name": "OpenAI", "api_key": SECRET}).body
    assert p["has_key"] is True
    assert call("PUT", f"/api/providers/{p['id']}/key", {"api_key": SECRET + "-2"}).status == 204
    assert call("GET", "/api/providers").body[0]["has_key"] is True
    call("PATCH", f"/api/providers/{p['id']}", {"name": "Renamed"})
    call("GET", "/api/models")
    assert call("DELETE", f"/api/providers/{p['id']}/key").status == 204
    assert call("GET", "/api/providers").body[0]["has_key"] is False
    assert call("PUT", f"/api/providers/{p['id']}/key", {"api_key": SECRET + "-3"}).status == 204
    assert not any(SECRET in b for b in bodies)
    # Memory only: no file in the data dir (database, WAL, logs, server.json) holds a key.
    assert _files_containing(server.data_dir, SECRET.encode()) == []
    server.terminate()
    assert _files_containing(server.data_dir, SECRET.encode()) == []


def test_keys_with_control_or_non_ascii_characters_are_422_and_nothing_is_stored(server, api):
    p = api.post("/api/providers", {"kind": "openai", "name": "OpenAI"}).body
    for key in BAD_KEYS:
        for method, path, body in (("POST", "/api/providers", {"kind": "openai", "name": "Other", "api_key": key}),
                                   ("PATCH", f"/api/providers/{p['id']}", {"name": "Renamed", "api_key": key}),
                                   ("PUT", f"/api/providers/{p['id']}/key", {"api_key": key})):
            r = api.request(method, path, body)
            assert r.status == 422, (method, key, r)
            message = r.body["error"]["fields"]["api_key"]
            assert message.endswith(".") and "key" in message and key not in message
    assert api.get("/api/providers").body == [{**p, "has_key": False}]
    # The line break a paste brings at the end is no part of the key.
    assert api.put(f"/api/providers/{p['id']}/key", {"api_key": SECRET + "\r\n"}).status == 204
    assert api.get("/api/providers").body[0]["has_key"] is True


def test_key_lives_only_as_long_as_the_process(server, api, start_server):
    p = api.post("/api/providers", {"kind": "openai", "name": "OpenAI", "api_key": SECRET}).body
    assert p["has_key"] is True
    server.terminate()
    again = start_server(data_dir=server.data_dir).api()
    assert again.get("/api/providers").body[0]["has_key"] is False


# -- a real Secret Service (gnome-keyring in its own D-Bus session) -------------------

def test_real_secret_service(secret_service, start_server, tmp_path):
    data = tmp_path / "data"
    s = start_server(secret_service.server_env(), data_dir=data)
    api = s.api()
    assert api.get("/api/settings").body["keyring"] == {"available": True, "reason": None, "cause": None,
                                                        "fix": None}
    pid = api.post("/api/providers", {"kind": "openai", "name": "OpenAI", "api_key": SECRET}).body["id"]
    assert secret_service.password("numi", f"provider:{pid}") == SECRET
    s.terminate()
    api = start_server(secret_service.server_env(), data_dir=data).api()
    assert api.get("/api/providers").body[0]["has_key"] is True
    assert api.delete(f"/api/providers/{pid}/key").status == 204
    assert secret_service.password("numi", f"provider:{pid}") is None
    assert _files_containing(data, SECRET.encode()) == []
