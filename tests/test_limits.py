"""Limits without cliffs: the open-file limit.

The server raises its soft open-file limit to the hard one at start
(docs/PROTOCOL.md, "Limits").
"""
from __future__ import annotations

import resource

import pytest

from tests.numi_client import ServerProcess


def open_files(soft: int, hard: int):
    """A preexec_fn: the server starts with these open-file limits."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def proc_limit(pid: int) -> tuple[int, int]:
    """(soft, hard) open files of a running process, as the kernel reports them."""
    with open(f"/proc/{pid}/limits") as f:
        line = next(line for line in f if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return int(soft), int(hard)


@pytest.fixture
def limited_server(tmp_path):
    started = []

    def start(soft: int, hard: int) -> ServerProcess:
        proc = ServerProcess(tmp_path / f"data{len(started)}", preexec_fn=open_files(soft, hard)).start()
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def test_the_soft_open_file_limit_is_raised_to_the_hard_one_at_start(limited_server):
    server = limited_server(256, 4096)
    assert proc_limit(server.proc.pid) == (4096, 4096)
    assert server.api().get("/api/health").status == 200


def test_on_macos_an_unlimited_hard_limit_is_capped_at_open_max(monkeypatch):
    # macOS cannot run here: its platform name and limits are stood in for, setrlimit recorded.
    from backend import fdlimit

    calls = []
    monkeypatch.setattr(fdlimit.sys, "platform", "darwin")
    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, resource.RLIM_INFINITY))
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: calls.append((which, limits)))
    assert fdlimit.raise_open_file_limit() == (256, fdlimit.MACOS_OPEN_MAX)
    assert calls == [(resource.RLIMIT_NOFILE, (fdlimit.MACOS_OPEN_MAX, resource.RLIM_INFINITY))]
