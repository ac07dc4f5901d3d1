"""build/web_bundle.py: esbuild is taken only as pinned, and a bundle is made only when stale.

The registry here is a real HTTP server on loopback serving a package built by the test."""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import subprocess
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from backend.web_assets import BUNDLE_DIR, BUNDLE_MANIFEST, source_hash

SCRIPT = Path(__file__).resolve().parent.parent / "build" / "web_bundle.py"


@pytest.fixture
def script():
    spec = importlib.util.spec_from_file_location("web_bundle", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def registry():
    """A registry serving one package tarball at whatever path is asked; records the paths."""
    served = {"body": b"", "paths": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            served["paths"].append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(served["body"])))
            self.end_headers()
            self.wfile.write(served["body"])

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    served["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield served
    server.shutdown()
    server.server_close()


def package(plat: str, binary: bytes) -> bytes:
    """An @esbuild/<platform> tarball as the registry serves it."""
    buf = io.BytesIO()
    name = "package/esbuild.exe" if plat.startswith("win32") else "package/bin/esbuild"
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(binary)
        tar.addfile(info, io.BytesIO(binary))
    return buf.getvalue()


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def test_a_package_that_does_not_match_its_pinned_hash_is_refused(script, registry, tmp_path):
    plat = script.npm_platform()
    registry["body"] = package(plat, b"#!/bin/sh\necho not esbuild\n")
    script.REGISTRY = registry["url"]
    with pytest.raises(SystemExit, match="does not match its pinned sha512 hash"):
        script.esbuild(tmp_path / "tools")
    assert registry["paths"] == [f"/@esbuild/{plat}/-/{plat}-{script.ESBUILD}.tgz"]
    assert not (tmp_path / "tools").exists()  # nothing of it was kept


def test_the_pinned_package_is_unpacked_once_and_kept(script, registry, tmp_path):
    plat = script.npm_platform()
    registry["body"] = package(plat, b"#!/bin/sh\necho pinned\n")
    script.REGISTRY = registry["url"]
    script.INTEGRITY = {plat: integrity(registry["body"])}
    exe = script.esbuild(tmp_path / "tools")
    assert exe.read_bytes() == b"#!/bin/sh\necho pinned\n"
    assert exe.stat().st_mode & 0o111
    assert script.esbuild(tmp_path / "tools") == exe
    assert len(registry["paths"]) == 1  # the second call fetched nothing


def web_with_bundle(tmp_path, manifest=None) -> Path:
    """A web/ of one module and a bundle of it; its manifest names web/'s hash unless given."""
    web = tmp_path / "web"
    (web / "app").mkdir(parents=True)
    (web / "app" / "main.js").write_text("export const a = 1;\n")
    (web / BUNDLE_DIR).mkdir()
    (web / BUNDLE_DIR / "main.js").write_text("bundled\n")
    (web / BUNDLE_DIR / BUNDLE_MANIFEST).write_text(manifest or json.dumps({"source": source_hash(web)}))
    return web


def test_an_up_to_date_bundle_is_left_alone(script, tmp_path):
    web = web_with_bundle(tmp_path)
    script.REGISTRY = "http://127.0.0.1:9"  # nothing is fetched: a fetch would fail
    assert script.bundle(web) is False
    assert (web / BUNDLE_DIR / "main.js").read_text() == "bundled\n"


def test_a_failed_bundle_leaves_no_half_bundle_and_keeps_the_old_one(script, tmp_path):
    # An unreadable manifest means "not up to date", not a crash.
    web = web_with_bundle(tmp_path, manifest="[]")
    # An esbuild that writes part of its output, then fails.
    plat = script.npm_platform()
    exe = tmp_path / "tools" / f"esbuild-{script.ESBUILD}-{plat}" / "esbuild"
    exe.parent.mkdir(parents=True)
    exe.write_text('#!/bin/sh\nmkdir -p .app-bundle.part && echo half > .app-bundle.part/main.js\nexit 3\n')
    exe.chmod(0o755)
    with pytest.raises(subprocess.CalledProcessError):
        script.bundle(web, tmp_path / "tools")
    assert not (web / (BUNDLE_DIR + ".part")).exists()
    assert (web / BUNDLE_DIR / "main.js").read_text() == "bundled\n"  # the previous bundle
