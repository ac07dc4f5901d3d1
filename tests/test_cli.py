"""The command line of CONTRACT §1: version, server.json, one instance per data dir."""
import json
import os
import stat
import subprocess
import sys

from tests.numi_client import ROOT, ServerProcess


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=30, env={**os.environ, **(env or {})})


def test_version():
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("numi 0.")


def test_numi_entry_point_version():
    numi = os.path.join(os.path.dirname(sys.executable), "numi")
    out = subprocess.run([numi, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith("numi ")


def test_bad_port_is_refused_with_a_message():
    out = run_cli("--port", "70000")
    assert out.returncode == 2 and "--port" in out.stderr


def test_server_json_is_private_and_describes_the_server(server):
    path = server.data_dir / "server.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    info = json.loads(path.read_text())
    assert info["pid"] == server.proc.pid and info["url"] == f"http://127.0.0.1:{info['port']}/"
    assert len(info["token"]) >= 22 and info["version"]
    assert server.api().get("/api/settings").status == 200


def test_second_instance_on_the_same_data_dir_prints_the_url_and_exits(server):
    out = run_cli("--data-dir", str(server.data_dir))
    assert out.returncode == 0 and server.info["url"] in out.stdout
    assert server.proc.poll() is None  # the first one is untouched
    assert json.loads((server.data_dir / "server.json").read_text())["pid"] == server.proc.pid


def test_data_dir_from_the_environment(tmp_path):
    proc = ServerProcess(tmp_path / "unused")
    proc.env["NUMI_DATA_DIR"] = str(tmp_path / "from-env")
    proc.proc = subprocess.Popen([sys.executable, "-m", "backend"], cwd=ROOT, env=proc.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert "running at" in proc.proc.stdout.readline()
        assert (tmp_path / "from-env" / "server.json").exists()
        assert (tmp_path / "from-env" / "numi.db").exists()
    finally:
        proc.stop()


def test_fresh_token_every_start(server):
    first = server.token
    server.terminate()
    server.start()
    assert server.token != first
    assert server.api(token=first).get("/api/chats").status == 401


def test_cli_backup_is_private_whatever_the_umask(server, tmp_path):
    """`numi backup` with Numi stopped writes the copy itself: readable by this user only."""
    server.terminate()
    old = os.umask(0o022)  # the command inherits it
    try:
        chosen = run_cli("backup", str(tmp_path / "b.db"), "--data-dir", str(server.data_dir))
        default = run_cli("backup", "--data-dir", str(server.data_dir))
    finally:
        os.umask(old)
    assert chosen.returncode == 0 and default.returncode == 0, (chosen, default)
    made = [p for p in (server.data_dir / "backups").iterdir() if "auto" not in p.name]  # not the daily one
    assert len(made) == 1, made
    for path in (tmp_path / "b.db", *made):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((server.data_dir / "backups").stat().st_mode) == 0o700
