"""Embedding the bases' chunks in the background, and queries, through an OpenAI-compatible
`/v1/embeddings` (the `openai` SDK), with the model `settings.knowledge.embeddings` names.

One thread of its own: it looks at the setting every POLL_S seconds (and when woken after a
scan), and for each base embeds what the current model has not, BATCH chunks a request (a
chunk kept by a re-index keeps its vector, so only what changed is sent). When a base has no
chunk left to embed it loads the base's vectors into memory (vectors.py) as of the base's
chunk version: only then do its queries use them (hybrid.py); until then, BM25 alone.
An endpoint that fails (unreachable, timing out, refusing the key, unknown model, HTTP 5xx)
is logged and tried again after RETRY_FIRST_S seconds, doubling to RETRY_MAX_S; its sentence
shows in each base's `embeddings` status. Indexing and queries never wait for it.

Other features embed their own texts with the same model and endpoint through `model` and
`embed` (the service provides the embedder as "embeddings", backend/turns/features.Embeddings):
memory ranks memories with them. A failure there is logged and, for QUERY_QUIET_S, makes `model`
say None and `embed` answer None at once; it leaves the bases' status and queries alone.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass

import numpy as np

from backend.core.errors import ProviderError
from backend.core.types import ProviderConfig
from backend.features.knowledge import section
from backend.features.knowledge.vectors import BaseVectors, normalised, to_blob
from backend.store.db import short_connection

log = logging.getLogger(__name__)

BATCH = 32  # chunks a request: ~200 KB of text, a few seconds of a local model's time
INPUT_CHARS = 8000  # of a chunk's title and text; a chunk is ~1 200 tokens, well under any model's context
QUERY_TIMEOUT_S = 5.0
QUERY_QUIET_S = 30.0  # after a query's embedding failed, queries use BM25 alone this long (no wait each time)
RETRY_MAX_S = 300.0
REFRESH_S = 60.0  # the provider's URL and key are read again this often (the catalog may change)


def _env_seconds(name: str, default: float) -> float:
    # Read at each use: tests shorten the waits.
    try:
        return max(0.01, float(os.environ.get(name, default)))
    except ValueError:
        return default


def retry_first_s() -> float:
    return _env_seconds("NUMI_KNOWLEDGE_EMBED_RETRY_S", 5.0)


def poll_s() -> float:
    return _env_seconds("NUMI_KNOWLEDGE_EMBED_POLL_S", 1.0)


class EmbedError(Exception):
    """Embedding failed; `reason` is a sentence for the person. `refused`: the endpoint refused
    these inputs (HTTP 400) rather than failing."""

    def __init__(self, reason: str, refused: bool = False):
        super().__init__(reason)
        self.reason, self.refused = reason, refused


@dataclass(frozen=True)
class Target:
    """Where embeddings are asked for: the provider as the catalog holds it, its key, the model."""
    provider: ProviderConfig
    model: str
    resolved_at: float


class Embedder:
    """The embedding thread, and what queries ask of it (`ready`, `embed_query`, `status`)."""

    def __init__(self, index, keys):
        self.index = index
        self.keys = keys
        self.requests = 0  # made to the endpoint (tests and logs)
        self._config: tuple[str, str] | None = None  # (provider id, model) as last read
        self._target: Target | None = None
        self._client = None
        self._client_lock = threading.Lock()
        self._vectors: dict[str, BaseVectors] = {}  # base id → its vectors by the current model
        self._embedded: dict[str, int] = {}  # base id → chunks embedded by the current model (status)
        self._error: str | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._worked = False  # the endpoint has embedded something for the current model
        self._quiet_until = 0.0
        self._lent_quiet_until = 0.0  # the same, for `embed` (other features' texts)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._config = self._read_config()
        self._thread = threading.Thread(target=self._run, name="knowledge-embed", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stopping.set()
        self._wake.set()
        # A request in flight may run to its timeout: the thread is a daemon, and what it would
        # write after the index closes is dropped (it reads everything again at the next start).
        if self._thread is not None:
            self._thread.join(timeout)
        self._close_client()

    def wake(self) -> None:
        """Look for chunks to embed now rather than at the next poll."""
        self._wake.set()

    # --- what queries and routes ask --------------------------------------------------------

    def ready(self, base_ids: list[str]) -> dict[str, BaseVectors] | None:
        """Each base's vectors when every one of them is fully embedded by the current model, else None."""
        config = self._config
        if config is None or self._target is None:
            return None
        out = {}
        for base_id in dict.fromkeys(base_ids):
            held = self._vectors.get(base_id)
            if held is None or held.model != config[1] or held.version != self.index.version(base_id):
                return None
            out[base_id] = held
        return out

    def embed_query(self, q: str) -> np.ndarray | None:
        """The query's normalised embedding (one request, a short timeout), or None when it failed."""
        target = self._target
        if target is None or time.monotonic() < self._quiet_until:
            return None
        try:
            return self._request(target, [q[:INPUT_CHARS]], QUERY_TIMEOUT_S)[0]
        except EmbedError as exc:
            log.warning("knowledge: a query's embedding failed; searching by words alone: %s", exc.reason)
            self._quiet_until = time.monotonic() + QUERY_QUIET_S
            self._error = exc.reason
            return None

    # --- what other features ask ("embeddings", backend/turns/features.Embeddings) ------------

    def model(self) -> str | None:
        """The model `embed` uses now; None while off, not yet reached, failing, or quiet after a failure."""
        config, target = self._config, self._target
        if config is None or target is None or target.model != config[1] \
                or time.monotonic() < self._lent_quiet_until:
            return None
        return target.model

    def embed(self, texts: list[str], timeout: float | None, model: str) -> list[np.ndarray | None] | None:
        """Each text's normalised vector by `model` (None for one the endpoint refuses alone), or None:
        the model is no longer `model`, or embedding failed (logged; then None at once for QUERY_QUIET_S)."""
        target = self._target
        if target is None or target.model != model or not texts or time.monotonic() < self._lent_quiet_until:
            return None
        try:
            return self._embed_each(target, [t[:INPUT_CHARS] for t in texts], timeout)
        except EmbedError as exc:
            log.warning("embeddings: %d texts of another feature could not be embedded; it goes without "
                        "embeddings for %.0f s: %s", len(texts), QUERY_QUIET_S, exc.reason)
            self._lent_quiet_until = time.monotonic() + QUERY_QUIET_S
            return None

    def status(self, base_id: str) -> dict | None:
        """The base's `embeddings` field: None when off, else {provider_id, model, status, embedded, error}.

        status: "ready" (queries fuse vectors with BM25), "embedding" (BM25 alone until every chunk
        is embedded) or "error" (the endpoint's last answer was a failure, said by `error`: it is
        tried again later, and meanwhile queries use BM25 alone)."""
        config = self._config
        if config is None:
            return None
        error = self._error
        state = "error" if error else "ready" if self.ready([base_id]) is not None else "embedding"
        return {"provider_id": config[0], "model": config[1], "status": state,
                "embedded": self._embedded.get(base_id, 0), "error": error}

    # --- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._cycle()
            except sqlite3.ProgrammingError:
                if not self._stopping.is_set():  # the index closed under a request: Numi is closing
                    log.exception("knowledge: embedding failed")
            except Exception:
                log.exception("knowledge: embedding failed")
            self._wake.wait(poll_s())
            self._wake.clear()

    def _read_config(self) -> tuple[str, str] | None:
        with short_connection():
            value = section.embeddings()
        return None if value is None else (value["provider_id"], value["model"])

    def _cycle(self) -> None:
        config = self._read_config()
        if config != self._config:
            self._switch(config)
        if config is None or time.monotonic() < self._retry_at:
            return
        try:
            target = self._target
            if target is None or time.monotonic() - target.resolved_at > REFRESH_S:
                target = self._target = self._resolve(config)
            for base_id in self.index.base_ids():
                if self._stopping.is_set() or not self._catch_up(base_id, target):
                    return
            for gone in set(self._vectors) - set(self.index.base_ids()):
                self._vectors.pop(gone, None)
        except EmbedError as exc:
            self._failures += 1
            delay = min(RETRY_MAX_S, retry_first_s() * 2 ** (self._failures - 1))
            self._retry_at = time.monotonic() + delay
            self._error = exc.reason
            self._target = None  # read the provider and its key again before the next try
            log.warning("knowledge: embedding with %s failed (trying again in %.0f s): %s",
                        config[1], delay, exc.reason)
            return
        self._failures = 0

    def _switch(self, config: tuple[str, str] | None) -> None:
        log.info("knowledge: embeddings %s", f"by {config[1]}" if config else "off")
        self._config = config
        self._target = None
        self._vectors = {}  # another model's vectors score nothing against this one's queries
        self._embedded = {}
        self._error, self._failures, self._retry_at, self._worked, self._quiet_until = None, 0, 0.0, False, 0.0
        self._lent_quiet_until = 0.0
        self._close_client()

    def _catch_up(self, base_id: str, target: Target) -> bool:
        """Embed what the base lacks, then hold its vectors; False when the setting changed meanwhile."""
        model = target.model
        version = self.index.version(base_id)  # read before looking: a write after it makes this stale
        held = self._vectors.get(base_id)
        if held is not None and held.model == model and held.version == version:
            return True
        if base_id not in self._embedded:
            self._embedded[base_id] = self.index.embedding_counts(base_id, model)[0]
        while not self._stopping.is_set():
            rows = self.index.unembedded(base_id, model, BATCH)
            if not rows:
                break
            blobs = self._embed_batch(target, [f"{title}\n\n{text}"[:INPUT_CHARS] for _, _, title, text in rows])
            saved = self.index.store_vectors(base_id, model, [(r[0], r[1], b) for r, b in zip(rows, blobs)])
            self._embedded[base_id] = self._embedded.get(base_id, 0) + saved
            if self._read_config() != self._config:
                return False
        else:
            return False
        ids = self.index.embedded_ids(base_id, model)
        if held is None or held.model != model:
            held = BaseVectors(model, lambda wanted: self.index.vectors(base_id, model, wanted))
        held.sync(ids)
        held.version = version
        self._vectors[base_id] = held
        self._embedded[base_id] = len(ids)
        return True

    def _embed_batch(self, target: Target, texts: list[str]) -> list[bytes]:
        """Each text's vector as a BLOB; b"" for one the endpoint refuses alone (it matches nothing
        and is not sent again) — unless it refuses everything, which is the endpoint's failure."""
        return [b"" if v is None else to_blob(v) for v in self._embed_each(target, texts)]

    def _embed_each(self, target: Target, texts: list[str], timeout: float | None = None) -> list[np.ndarray | None]:
        """Each text's vector; None for one the endpoint refuses alone (`_embed_batch`)."""
        try:
            return list(self._request(target, texts, timeout))
        except EmbedError as exc:
            if not exc.refused:
                raise
            refusal = exc
        out: list[np.ndarray | None] = [None]
        if len(texts) > 1:
            out = []
            for text in texts:
                try:
                    out.append(self._request(target, [text], timeout)[0])
                except EmbedError as exc:
                    if not exc.refused:
                        raise
                    out.append(None)
        # A model that refuses every passage is the wrong model (or none), not a bad passage.
        if not self._worked or (len(out) > 1 and all(v is None for v in out)):
            raise EmbedError(refusal.reason)
        log.warning("embeddings: %d texts refused by %s are left out of the embeddings: %s",
                    sum(v is None for v in out), target.model, refusal.reason)
        return out

    # --- the endpoint -----------------------------------------------------------------------

    def _resolve(self, config: tuple[str, str]) -> Target:
        from backend.providers.wire import openai_base_url

        provider_id, model = config
        with short_connection():
            found = section.provider(provider_id)
        if found is None:
            raise EmbedError(f"The provider chosen for embeddings ({provider_id}) is no longer in the catalog. "
                             f"Pick another in Settings → Knowledge.")
        if not found["enabled"]:
            raise EmbedError(f"{found['name']} is turned off. Turn it on in Settings → Providers, or pick another "
                             f"provider for embeddings.")
        if found["kind"] not in section.OPENAI_KINDS:
            raise EmbedError(f"{found['name']} has no embeddings API. Pick an OpenAI or OpenAI-compatible provider.")
        key = self.keys.get(provider_id) if self.keys is not None else None
        provider = ProviderConfig(id=provider_id, name=found["name"], kind=found["kind"],
                                  base_url=found["base_url"], api_key=key, timeout=float(found["timeout"]))
        try:
            openai_base_url(provider)
        except ProviderError as exc:
            raise EmbedError(str(exc)) from None
        return Target(provider, model, time.monotonic())

    def _client_for(self, target: Target):
        import openai

        from backend.providers.wire import client_timeout, openai_base_url, sendable_key

        with self._client_lock:
            if self._client is None or self._client[0] is not target:
                try:
                    key = sendable_key(target.provider)
                except ProviderError as exc:
                    raise EmbedError(str(exc)) from None
                # max_retries=0: the thread retries with its own backoff, a query falls back at once.
                self._client = (target, openai.OpenAI(api_key=key, base_url=openai_base_url(target.provider),
                                                      timeout=client_timeout(target.provider.timeout),
                                                      max_retries=0))
            return self._client[1]

    def _close_client(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client[1].close()

    def _request(self, target: Target, inputs: list[str], timeout: float | None = None) -> list[np.ndarray]:
        """The inputs' normalised embeddings, in order (one request, no retry)."""
        import openai

        p = target.provider
        client = self._client_for(target)
        self.requests += 1
        where = p.base_url or "api.openai.com"
        try:
            extra = {"timeout": timeout} if timeout is not None else {}
            answer = client.embeddings.create(model=target.model, input=inputs, **extra)
            data = sorted(answer.data, key=lambda e: e.index)
            vectors = [normalised(e.embedding) for e in data]
        except openai.BadRequestError as exc:
            raise EmbedError(f"{p.name} refused to embed with {target.model} (HTTP 400){_said(exc)}",
                             refused=True) from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EmbedError(f"{p.name} refused the API key (HTTP {exc.status_code}) when Numi asked for "
                             f"embeddings. Check the key for {p.name} in Settings → Providers.") from None
        except openai.NotFoundError:
            raise EmbedError(f"{p.name} has no embeddings model {target.model!r} at {where} (HTTP 404). Check the "
                             f"model's name in Settings → Knowledge (with Ollama, pull it first: "
                             f"ollama pull {target.model}).") from None
        except openai.APIStatusError as exc:
            raise EmbedError(f"{p.name} answered HTTP {exc.status_code} when Numi asked for embeddings. "
                             f"Numi tries again later.") from None
        except openai.APITimeoutError:
            raise EmbedError(f"{p.name} did not answer within {timeout or p.timeout:g} s when Numi asked for "
                             f"embeddings. Numi tries again later.") from None
        except openai.APIConnectionError:
            raise EmbedError(f"{p.name} could not be reached at {where}. Check that it is running; Numi "
                             f"tries again later.") from None
        except (openai.APIError, ValueError, TypeError, AttributeError):
            raise EmbedError(f"{p.name} did not answer with embeddings at {where}. Check that {target.model!r} "
                             f"is an embeddings model.") from None
        if len(vectors) != len(inputs) or len({v.size for v in vectors}) != 1 or not vectors[0].size:
            raise EmbedError(f"{p.name} answered {len(vectors)} embeddings of mixed or no size for {len(inputs)} "
                             f"passages. Check that {target.model!r} is an embeddings model.")
        self._worked = True
        self._error = None
        return vectors


def _said(exc) -> str:
    """The upstream's message as a clause (its own words, short), else a full stop."""
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            message = " ".join(err["message"].split())[:200]
        elif isinstance(err, str):
            message = " ".join(err.split())[:200]
    return f": {message!r}." if message else "."
