"""The command line of CONTRACT §1: version, server.json, one instance per data dir."""
import json
import os
import re
import signal
import stat
import subprocess
import sys

from tests.numi_client import ROOT, Api, ServerProcess

SIGN_IN = re.compile(r"^Numi is (?:already )?running at (http://127\.0\.0\.1:\d+/_sign-in/[A-Za-z0-9_-]+) "
                     r"\(open it to sign in; it works once, within 10 minutes\)$", re.M)


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
    assert out.stdout.count("http://") == 1  # only the address that works
    assert server.proc.poll() is None  # the first one is untouched
    assert json.loads((server.data_dir / "server.json").read_text())["pid"] == server.proc.pid
    # What it prints signs in, once; the token it read from server.json is not printed.
    assert server.token not in out.stdout + out.stderr
    assert_signs_in_once(server.port, server.token, SIGN_IN.search(out.stdout).group(1))


def assert_signs_in_once(port: int, token: str, link: str) -> None:
    """GET `link`: 303 to / with the session cookie; GET it again: the 401 page, no cookie."""
    path = link.split(f":{port}", 1)[1]
    anonymous = Api(port, None)
    first = anonymous.get(path)
    assert first.status == 303 and first.headers["Location"] == "/", first
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith("numi_session=") and "HttpOnly" in cookie and token not in cookie
    signed_in = anonymous.get("/api/settings", headers={"Cookie": cookie.split(";", 1)[0]})
    assert signed_in.status == 200
    again = anonymous.get(path)
    assert again.status == 401 and "Set-Cookie" not in again.headers
    assert again.headers["Content-Type"].startswith("text/html")
    assert b"already used or has expired" in again.body and token.encode() not in again.body


def test_headless_prints_a_one_time_sign_in_address_and_never_the_token(tmp_path):
    data_dir = tmp_path / "data"
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "backend", "--data-dir", str(data_dir)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            first_line = proc.stdout.readline()
            info = json.loads((data_dir / "server.json").read_text())
            # One address, the one that works: the plain URL alone leads to a signed-out page.
            assert first_line.count("http://") == 1 and SIGN_IN.match(first_line.rstrip("\n")), first_line
            assert_signs_in_once(info["port"], info["token"], SIGN_IN.match(first_line.rstrip("\n")).group(1))
            # The token still signs in the contract's way (§2).
            assert Api(info["port"], None).get(f"/?token={info['token']}").status == 303
        finally:
            proc.send_signal(signal.SIGTERM)
            rest, _ = proc.communicate(timeout=15)
    printed = first_line + rest + (tmp_path / "stderr").read_text()
    logs = "".join(p.read_text() for p in (data_dir / "logs").iterdir())
    assert "serving" in logs  # the log was written: the check below looks at something
    assert info["token"] not in printed and info["token"] not in logs
    assert "_sign-in/" not in logs  # an address that signs in is printed for the person, not logged


def test_sign_in_links_are_made_only_for_the_token_holder(server):
    made = server.api().post("/api/sign-in-links")
    assert made.status == 201 and made.body["expires_in_s"] == 600
    assert made.body["url"].startswith(f"http://127.0.0.1:{server.port}/_sign-in/")
    assert server.api(token=None).post("/api/sign-in-links").status == 401
    by_cookie = server.api(token=None).post("/api/sign-in-links", headers={
        "Cookie": server.session_cookie(), "Origin": f"http://127.0.0.1:{server.port}"})
    assert by_cookie.status == 403 and by_cookie.body["error"]["code"] == "forbidden"


def test_a_sign_in_nonce_works_once_and_not_after_its_time():
    from backend.sign_in import SignInLinks

    links = SignInLinks()
    live, expired = links.new_path(60).rsplit("/", 1)[1], links.new_path(0).rsplit("/", 1)[1]
    assert len(live) >= 32 and live != expired
    assert links.spend(live) is True and links.spend(live) is False
    assert links.spend(expired) is False
    assert links.spend("made-up") is False


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
