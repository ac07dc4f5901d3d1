"""A fake OpenAI embeddings endpoint on loopback, for tests: `POST /v1/embeddings`.

Real HTTP on a real socket, answering as OpenAI does: the request `{"model", "input": str |
[str], "encoding_format"?: "float" | "base64"}` (the openai SDK asks for base64 unless told
otherwise), the answer `{"object": "list", "data": [{"object": "embedding", "index",
"embedding"}], "model", "usage"}`, and its errors (404 `model_not_found` for a model it does not
serve, 400 for input it cannot take).

What its vectors mean (`embedding(text)`): every word (letters and digits, lower-cased, a few
English function words left out) is padded as "^word$" and cut into character trigrams; each
trigram is hashed (blake2b, so the same in every process) to one of DIM dimensions with a sign
and added, each word weighing the same whatever its length; the sum is normalised. Two texts are
near when they share words or parts of words — plurals and other forms ("tomatoes", "tomato"),
typos ("tomatos", "watring"), compounds ("rainwater", "rain water") — which BM25's whole stemmed
words miss. That is enough to help retrieval beyond BM25, and nothing like a real model's sense.
Given texts to fit on (`fitted_on`), half of each vector comes from a small latent-semantic
model of them instead (tests/fake_lsa.py), which also puts words used alike near each other.

    with FakeEmbeddings() as fe:            # its own server
        fe.base_url                         # http://127.0.0.1:<port>/v1, for a provider's base URL
        fe.inputs                           # every text embedded so far, in order
    fe.install(fake_provider)               # or answered by a tests/fakeprovider server too
    fe.hold(); ...; fe.release()            # requests wait until released
    fe.fail(503); ...; fe.fail(None)        # requests answer that status until told otherwise
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakeprovider.server import json_body

DIM = 256
MODELS = ("fake-embed", "fake-embed-2")
PATH = "/v1/embeddings"
STOP = frozenset("a an and are as at be by for from how i in is it of on or the this to was what when with".split())
WORD = re.compile(r"[^\W_]+")


def _trigram_slot(gram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
    n = int.from_bytes(digest, "little")
    return n % dim, (1.0 if (n >> 32) & 1 else -1.0)


def embedding(text: str, dim: int = DIM, model: str = MODELS[0]) -> list[float]:
    """The fake's vector for a text (see the module's docstring); another model, other slots."""
    v = [0.0] * dim
    salt = "" if model == MODELS[0] else model + ":"
    for word in WORD.findall(text.lower()):
        if word in STOP:
            continue
        padded = f"^{word}$"
        grams = [padded[i:i + 3] for i in range(len(padded) - 2)]
        weight = 1.0 / math.sqrt(len(grams))
        for gram in grams:
            slot, sign = _trigram_slot(salt + gram, dim)
            v[slot] += sign * weight
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else v


@dataclass
class Seen:
    model: str | None
    inputs: list[str]
    encoding_format: str | None
    authorization: str | None


class FakeEmbeddings:
    """The endpoint, on its own loopback server (`port` 0: any free one)."""

    def __init__(self, port: int = 0, dim: int = DIM, models: tuple[str, ...] = MODELS,
                 fitted_on: list[str] | None = None, lsa_share: float = 0.9):
        """`fitted_on`: texts a small latent-semantic model is fitted on (tests/fake_lsa.py); its
        vectors then make `lsa_share` of each embedding's weight, the trigrams the rest."""
        self.dim, self.models = dim, tuple(models)
        self.lsa = None
        if fitted_on:
            from tests.fake_lsa import Lsa
            self.lsa = Lsa(fitted_on, dim // 2, STOP)
        self.lsa_share = lsa_share
        self._cond = threading.Condition()
        self._seen: list[Seen] = []
        self._status: int | None = None  # every request answers this status while set
        self._held = False
        self._waiting = 0  # requests parked by hold()
        self._closed = False
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-embeddings:{self.port}", daemon=True)
        self._thread.start()

    # --- what it saw ---------------------------------------------------------------------

    @property
    def requests(self) -> list[Seen]:
        with self._cond:
            return list(self._seen)

    @property
    def inputs(self) -> list[str]:
        """Every text asked for, in order (a failed or refused request's too)."""
        return [text for seen in self.requests for text in seen.inputs]

    def wait_requests(self, n: int, timeout: float = 10.0) -> list[Seen]:
        """Block until at least n requests arrived; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._seen) >= n, timeout):
                raise TimeoutError(f"expected {n} embeddings requests, got {len(self._seen)} in {timeout} s")
            return list(self._seen)

    # --- how it answers ------------------------------------------------------------------

    def fail(self, status: int | None) -> None:
        """Answer every request with this HTTP status (an OpenAI error body); None: answer again."""
        with self._cond:
            self._status = status

    def hold(self) -> None:
        """Park every request (after recording it) until release()."""
        with self._cond:
            self._held = True

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def wait_held(self, n: int = 1, timeout: float = 10.0) -> None:
        """Block until n requests are parked by hold()."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._waiting >= n, timeout):
                raise TimeoutError(f"expected {n} held embeddings requests, have {self._waiting}")

    def install(self, provider) -> None:
        """Answer `POST /v1/embeddings` on a tests/fakeprovider server too (its chat and this on one URL)."""
        provider.routes[("POST", PATH)] = lambda body: self.answer(body, None)

    def answer(self, body: Any, authorization: str | None) -> tuple[int, dict]:
        """(status, JSON body) for one request's body."""
        body = body if isinstance(body, dict) else {}
        raw = body.get("input")
        inputs = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        texts = [x for x in inputs if isinstance(x, str)]
        model, fmt = body.get("model"), body.get("encoding_format")
        with self._cond:
            self._seen.append(Seen(model if isinstance(model, str) else None, texts, fmt, authorization))
            self._cond.notify_all()
            if self._held:
                self._waiting += 1
                self._cond.notify_all()
                try:
                    self._cond.wait_for(lambda: not self._held or self._closed)
                finally:
                    self._waiting -= 1
            status = self._status
        if status is not None:
            return status, _error(f"The fake embeddings endpoint answers {status} for now.", "server_error", None)
        if model not in self.models:
            return 404, _error(f"The model `{model}` does not exist or you do not have access to it.",
                               "invalid_request_error", "model_not_found")
        if not inputs or len(texts) != len(inputs) or any(not t for t in texts):
            return 400, _error("'input' must be a non-empty string or a list of non-empty strings.",
                               "invalid_request_error", None)
        if fmt not in (None, "float", "base64"):
            return 400, _error("'encoding_format' must be 'float' or 'base64'.", "invalid_request_error", None)
        data = []
        for i, text in enumerate(texts):
            vector = embedding(text, self.dim, model) if self.lsa is None else self._fitted(text, model)
            value: Any = vector
            if fmt == "base64":
                value = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(len(WORD.findall(t)) for t in texts)
        return 200, {"object": "list", "data": data, "model": model,
                     "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _fitted(self, text: str, model: str) -> list[float]:
        """Half the dimensions from the fitted model, half from the trigrams, weighed by `lsa_share`."""
        half = self.dim // 2
        meaning = [float(x) * math.sqrt(self.lsa_share) for x in self.lsa.vector(text)]
        spelling = [x * math.sqrt(1.0 - self.lsa_share) for x in embedding(text, self.dim - half, model)]
        v = meaning + spelling
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v] if norm else v

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeEmbeddings:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error(message: str, kind: str, code: str | None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json_body(self)
        if self.path.split("?")[0] != PATH:
            status, answer = 404, _error(f"No route POST {self.path}", "invalid_request_error", None)
        else:
            status, answer = self.server.fake.answer(body, self.headers.get("Authorization"))  # type: ignore[attr-defined]
        data = json.dumps(answer).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away (a timeout, a closed app)
