"""Embedding memories in the background, and a request's latest message when it chooses them.

The vectors come from what another feature provides as "embeddings" (knowledge's embedder: the
model Settings → Knowledge names; backend/turns/features.Embeddings), looked up at each use.
One thread of its own embeds the memories lacking a vector by the current model, BATCH a
request, when woken (a memory saved, edited or deleted) or every `poll_s()` seconds
(NUMI_MEMORY_EMBED_POLL_S, default 2). It puts each vector in the matrix it holds (held.py) before
writing it to the table (vector_rows.py), so a memory counted as embedded in the table is always
in the matrix. A model change drops the matrix: another model's vectors score nothing against
this one's. While embeddings are off, failing or quiet after a failure, nothing is asked and the
matrix is kept (of no use until its model is back).

`similar` ranks the memories by cosine against the latest message, only while every memory has a
vector by the current model; the message's own vector is asked with a short timeout and kept in a
small cache (the meter and the inspector plan the same request again).
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from backend.features.memory import vector_rows
from backend.features.memory.held import Held, to_blob
from backend.store.db import short_connection

log = logging.getLogger(__name__)

BATCH = 32  # memories a request: at most 500 characters each
QUERY_TIMEOUT_S = 2.0  # a request waits this long at most for its message's vector
QUERY_CHARS = 4000  # of the latest message, embedded
CACHED = 64  # message vectors kept, by (model, text)


def poll_s() -> float:
    # Read at each use: tests shorten the wait.
    try:
        return max(0.01, float(os.environ.get("NUMI_MEMORY_EMBED_POLL_S", 2.0)))
    except ValueError:
        return 2.0


class MemoryEmbedder:
    """The embedding thread, and what a request asks of it (`similar`); `provided`: AppContext.provided."""

    def __init__(self, provided: Callable[[str], Any]):
        self._provided = provided
        self._held = Held()  # replaced whole, under _lock, by the thread (and `forgot`)
        self._generation = 0  # bumped by `forgot`: a batch begun before it is not held
        self._lock = threading.Lock()
        self._queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memory-embed", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)  # a request in flight may run on: a daemon, whatever it writes is valid

    def wake(self) -> None:
        """Look for memories to embed now rather than at the next poll."""
        self._wake.set()

    def forgot(self) -> None:
        """Every memory was forgotten: the vectors held go too."""
        with self._lock:
            self._generation += 1
            self._held = Held(self._held.model)
        self._wake.set()

    # --- what a request asks ----------------------------------------------------------------

    def similar(self, query: str, count: int, limit: int) -> list[int] | None:
        """The seqs of the memories most like `query`, best first, at most `limit`; None when embeddings
        are off or not usable, a memory of the `count` lacks a vector by the current model, or the
        message's own vector could not be had (the request then ranks by full text alone)."""
        held = self._held
        if held.model is None or not query.strip():
            return None
        provider = self._provided("embeddings")
        model = provider.model() if provider is not None else None
        if model is None or model != held.model or vector_rows.count(model) != count:
            return None
        vector = self._query_vector(provider, model, query[:QUERY_CHARS])
        return None if vector is None else held.ranked(vector, limit)

    def _query_vector(self, provider, model: str, text: str) -> np.ndarray | None:
        key = (model, text)
        with self._lock:
            cached = self._queries.get(key)
            if cached is not None:
                self._queries.move_to_end(key)
                return cached
        vectors = provider.embed([text], QUERY_TIMEOUT_S, model)  # None at once for a while after a failure
        vector = vectors[0] if vectors else None
        if vector is None:
            return None
        with self._lock:
            self._queries[key] = vector
            while len(self._queries) > CACHED:
                self._queries.popitem(last=False)
        return vector

    # --- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                with short_connection():
                    self._cycle()
            except sqlite3.ProgrammingError:
                if not self._stopping.is_set():  # the database closed under a query: Numi is closing
                    log.exception("memory: embedding failed")
            except Exception:
                log.exception("memory: embedding failed")
            self._wake.wait(poll_s())
            self._wake.clear()

    def _cycle(self) -> None:
        provider = self._provided("embeddings")
        model = provider.model() if provider is not None else None
        if model is None:
            return
        with self._lock:
            generation, held = self._generation, self._held
        if held.model != model:
            log.info("memory: embeddings by %s", model)
            held = Held.loaded(model, vector_rows.vectors(model))
        else:  # deleted and edited memories' vectors were dropped from the table
            held = held.kept(set(vector_rows.seqs(model)))
        if not self._swap(generation, lambda _: held):
            return
        while not self._stopping.is_set():
            rows = vector_rows.unembedded(model, BATCH)
            if not rows:
                return
            # A failure is logged where it happens, and the provider says None for a while after.
            vectors = provider.embed([text for _, text in rows], None, model)
            if vectors is None or len(vectors) != len(rows):
                return
            seqs = [seq for seq, _ in rows]
            if not self._swap(generation, lambda now: now.with_vectors(seqs, vectors)):
                return
            vector_rows.put(model, [(seq, text, to_blob(v)) for (seq, text), v in zip(rows, vectors)])

    def _swap(self, generation: int, change: Callable[[Held], Held]) -> bool:
        """Hold `change(held)` unless everything was forgotten meanwhile (only this thread changes the model)."""
        with self._lock:
            if generation != self._generation:
                return False
            self._held = change(self._held)
            return True
