"""First run: which local model servers answer on this machine's loopback.

Each known server is asked, in parallel and with a short timeout, for its
model list. Only 127.0.0.1 is ever contacted, never through a proxy, so this
works (and stays private) with no network at all.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

PROBE_TIMEOUT_S = 0.5
# name → port; NUMI_PROBE_PORTS="Ollama=11434,LM Studio=1234" replaces it (tests point it at a fake).
DEFAULT_PORTS = {"Ollama": 11434, "LM Studio": 1234, "llama.cpp": 8080, "vLLM": 8000}
# Extra endpoints a server answers when /v1/models does not: Ollama's own list, llama.cpp's health.
FALLBACK_PATHS = {"Ollama": "/api/tags", "llama.cpp": "/health"}

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback never goes via a proxy


def probe_ports() -> dict[str, int]:
    raw = os.environ.get("NUMI_PROBE_PORTS")
    if raw is None:
        return dict(DEFAULT_PORTS)
    ports = {}
    for part in raw.split(","):
        name, sep, port = part.rpartition("=")
        if sep and name.strip() and port.strip().isdigit() and 0 < int(port) < 65536:
            ports[name.strip()] = int(port)
    return ports


def _get_json(url: str):
    with _opener.open(url, timeout=PROBE_TIMEOUT_S) as resp:
        if resp.status != 200:
            return None
        return json.loads(resp.read(1 << 20) or b"null")


def _models(data) -> list[str] | None:
    """Model ids from an OpenAI list ({"data": [{"id"}]}) or Ollama's ({"models": [{"name"}]})."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("data"), list):
        return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if isinstance(data.get("models"), list):
        return [m.get("name") or m.get("model") for m in data["models"]
                if isinstance(m, dict) and isinstance(m.get("name") or m.get("model"), str)]
    return None


def _probe(name: str, port: int) -> dict | None:
    root = f"http://127.0.0.1:{port}"
    for path in ("/v1/models", FALLBACK_PATHS.get(name)):
        if path is None:
            continue
        try:
            data = _get_json(root + path)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            if isinstance(getattr(exc, "reason", exc), ConnectionRefusedError):
                return None  # nothing listens there, so no other path will answer either
            continue  # a 404, a timeout, not JSON: try the server's other endpoint
        models = _models(data)
        if models is not None or path == "/health":
            return {"kind": "openai_compatible", "name": name, "base_url": f"{root}/v1",
                    "models": models or []}
    return None


def _same_server(a: str, b: str) -> bool:
    def norm(url: str) -> tuple:
        parts = urlsplit(url.strip().rstrip("/"))
        host = "127.0.0.1" if parts.hostname in ("localhost", "::1", "127.0.0.1") else parts.hostname
        return parts.scheme, host, parts.port, parts.path.rstrip("/")
    return norm(a) == norm(b)


def suggestions(configured_base_urls: list[str]) -> list[dict]:
    """The local servers that answer and are not configured yet, in the order of the port list."""
    ports = probe_ports()
    if not ports:
        return []
    with ThreadPoolExecutor(max_workers=len(ports), thread_name_prefix="probe") as pool:
        found = list(pool.map(lambda item: _probe(*item), ports.items()))
    return [s for s in found if s is not None
            and not any(_same_server(s["base_url"], url) for url in configured_base_urls if url)]
