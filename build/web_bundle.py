"""Bundle the web UI's start-up modules into a few files (web/.app-bundle/), with esbuild.

Opening Numi's window spends most of its time before the first chat paints on the
thirty-odd ES modules of web/app: each is a request, a cache read and a module record
of its own. Bundled, the start path is a handful of files and the newest message of
a long chat shows ~35 ms sooner (measured: tests/bench/test_ui_perf.py, the open).
web/ stays the source and is served as it is when there is no bundle, or when the
bundle no longer matches it (backend/web_assets.py checks the source hash written in
the bundle's manifest): a bundle can make the page faster, never different or stale.

What stays out of the bundle, loaded as files at run time: early.js (a classic script,
index.html loads it), the Markdown worker (a file of its own), web/vendor (the
Markdown libraries, evaluated one task each by markdown-loader.js, and the worker
loads the same files). The bundle's directory sits beside web/app, so the relative
paths esbuild writes to those files are the same from either.

esbuild itself is one native binary from the npm registry, pinned below by version
and by the registry's sha512 of each platform's package; it is fetched once into
.venv/tools/ (the platform's package only, no npm or Node.js needed).

    python build/web_bundle.py        # up to date: nothing to do; else bundle
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.web_assets import BUNDLE_DIR, BUNDLE_MANIFEST, fresh_bundle, source_hash  # noqa: E402

WEB = ROOT / "web"
TOOLS = ROOT / ".venv" / "tools"
ESBUILD = "0.28.2"
# dist.integrity of https://registry.npmjs.org/@esbuild/<platform>/<ESBUILD>
INTEGRITY = {
    "linux-x64": "sha512-4xTZr1FUmSoQW4XIWmit3tzQrUTZM+N3P0XV8xROKYF50XfI7xeO90+1bZvNwxIufQ9hDQVRJH5YhgPVF8A/HQ==",
    "linux-arm64": "sha512-pW4AC0P3it8c7do9MVM4p51FzHzdM/TZrerurgRcHJ2WTa1VQ1CIq18xncfpBJw4ojkiZZrKW2yIBWBP92j6Ug==",
    "darwin-x64": "sha512-uq6suIWYP37qzGddBKPw5QEQPi6HiLGsO7UmkpfyaYNQ3D+rN6w6WfwH+nuqcGXWvawGwxOEroO4YGnFh95azw==",
    "darwin-arm64": "sha512-n4KqkOQrraxHJcgjM1RvwbigfQKIKJVpM7xp+KsxiyUSrRdIXnt73VhrPAx0fV44hgfmIVKjxMN9J1t5jySVkw==",
    "win32-x64": "sha512-5ebpxr3nWMzrL/rnUI755Jkuee0bHL/Gq0WTF9lvcpv73wAp5eu8MfBUgWK9bhWvZjj7yX8etf/8tI8Ney695g==",
    "win32-arm64": "sha512-PIhhEkE9uPBleRBrQEJpUn7MBnibZzbGzYWPmY3x+YoVg/95zbjB4CxPPOQ8l5tYYM4mMaCthF8/1DIfBQQyWQ==",
}
# A mirror of the npm registry can stand in for it (the hashes above still decide).
REGISTRY = os.environ.get("NUMI_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")


def npm_platform() -> str:
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if not system or not arch:
        raise SystemExit(f"web bundle: no pinned esbuild for {sys.platform}/{machine}")
    return f"{system}-{arch}"


def esbuild(tools: Path = TOOLS) -> Path:
    """The pinned esbuild binary, fetched and checked against its pinned hash once."""
    plat = npm_platform()
    exe = tools / f"esbuild-{ESBUILD}-{plat}" / ("esbuild.exe" if plat.startswith("win32") else "esbuild")
    if exe.is_file():
        return exe
    url = f"{REGISTRY}/@esbuild/{plat}/-/{plat}-{ESBUILD}.tgz"
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    algo, _, want = INTEGRITY[plat].partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit(f"web bundle: {url} does not match its pinned {algo} hash; not using it")
    inner = "package/esbuild.exe" if plat.startswith("win32") else "package/bin/esbuild"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        binary = tar.extractfile(inner).read()
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_suffix(".part")
    tmp.write_bytes(binary)
    tmp.chmod(0o755)
    tmp.replace(exe)
    return exe


def bundle(web: Path = WEB, tools: Path = TOOLS) -> bool:
    """Write web/.app-bundle from web/app/main.js; False when it was already up to date."""
    source = source_hash(web)
    if fresh_bundle(web, source):
        return False
    out = web / BUNDLE_DIR
    staging = web / (BUNDLE_DIR + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        subprocess.run([
            str(esbuild(tools)), "app/main.js", "--bundle", "--format=esm", "--splitting",
            f"--outdir={staging.name}", "--target=es2022", "--charset=utf8", "--log-level=warning",
            # Loaded as files at run time (see the module's docstring).
            "--external:./vendor/*",
        ], cwd=web, check=True)
        (staging / BUNDLE_MANIFEST).write_text(json.dumps({"source": source, "esbuild": ESBUILD}) + "\n")
    except BaseException:
        # Half a bundle must not be left in web/ (the packaging copies web/ whole).
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    return True


if __name__ == "__main__":
    try:
        made = bundle()
    except (OSError, subprocess.CalledProcessError) as err:  # no network, no disk, esbuild failed
        raise SystemExit(f"web bundle: not made: {err}") from None
    print("web bundle: " + ("written to web/" + BUNDLE_DIR if made else "up to date"))
