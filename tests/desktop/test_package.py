"""Smoke test of the packaged app (`make package` runs it; skipped until something is built).

NUMI_APP names the executable to test: build/out/numi/numi by default, /usr/bin/numi
after the .deb is installed. It starts headless, answers /api/health, serves the
UI, and streams one turn from the fake provider over the WebSocket protocol.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from backend.web_assets import WebAssets
from tests.fakeprovider import script as S
from tests.fakeprovider.server import FakeProvider
from tests.numi_client import ROOT, Api, Socket

APP = Path(os.environ.get("NUMI_APP", ROOT / "build" / "out" / "numi" / "numi"))


class _Srv:
    def __init__(self, info):
        self.port, self.token = info["port"], info["token"]

    def ws_url(self, chat_id):
        return f"ws://127.0.0.1:{self.port}/ws/{chat_id}"


@pytest.mark.skipif(not APP.exists(), reason=f"{APP} is not built (make package)")
def test_packaged_app_serves_and_streams(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    start = time.monotonic()
    proc = subprocess.Popen([str(APP), "--headless", "--data-dir", str(data)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()  # printed once server.json is written
        assert "running at" in line, line
        print(f"\npackaged app {APP}: running {time.monotonic() - start:.3f} s after launch")
        info = json.loads((data / "server.json").read_text())
        api = Api(info["port"], info["token"])
        health = Api(info["port"], None).get("/api/health")
        assert health.status == 200 and health.body["ok"] is True
        page = Api(info["port"], None).get("/")
        assert page.status == 200 and b"<title>Numi</title>" in page.body
        # The page's own modules are in the bundle and served.
        module = next(p for p in page.body.decode().split('"') if p.endswith("/app/main.js"))
        assert Api(info["port"], None).get(module).status == 200
        # So is the start bundle made beside them (build/web_bundle.py), and it is used.
        if WebAssets(ROOT / "web").bundle is not None:
            assert "/app/chunk-" in page.body.decode() and "/app/views/chat.js" not in page.body.decode()
        with FakeProvider() as fake:
            provider = api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Local",
                                                   "base_url": fake.base_url, "api_key": "sk-test"}).body
            model = api.post("/api/models", {"provider_id": provider["id"], "api_model": "fake-model"}).body
            chat_id = api.post("/api/chats", {"model_id": model["id"], "title": "Smoke"}).body["id"]
            fake.enqueue([S.text("Packaged "), S.text("and streaming.")])
            sock = Socket(_Srv(info), chat_id)
            sock.send(type="send", request_id="smoke-1", content="hi")
            sock.until("turn_end", status="completed")
            assert sock.text() == "Packaged and streaming."
            sock.close()
        proc.terminate()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
