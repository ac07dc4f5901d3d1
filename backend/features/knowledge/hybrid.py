"""A query over one or more bases: BM25 alone, or fused with the chunks' embeddings.

BM25 alone while embeddings are off, while any of the bases is not yet embedded by the current
model, or when the query's own embedding fails. Otherwise the best of each ranking
(BM25 across the bases; cosine similarity across their vectors; twice `limit`, 20 to 50) are fused by reciprocal rank
(backend/core/fusion.py): a passage is one item whichever bases hold it (by its hash), and the best `limit`
make one list. A fused item's `score` is its RRF score (higher is better).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from backend.core.fusion import rrf
from backend.features.knowledge.index_db import MAX_LIMIT, KnowledgeIndex
from backend.features.knowledge.vectors import BaseVectors

CANDIDATES = 50  # from each ranking at most: room below the deepest `limit` for the two to disagree
DEPTH = 20  # from each ranking at least; a place past ~20 adds under 1/80 to a fused score
# The vectors are scored beside BM25: numpy's product and SQLite's search both let go of the GIL,
# so a query takes the longer of the two rather than their sum.
_beside = ThreadPoolExecutor(max_workers=2, thread_name_prefix="knowledge-vectors")


def search(index: KnowledgeIndex, embedder, base_ids: list[str], q: str, limit: int) -> list[dict]:
    """The best chunks of the bases for a query, best first, each passage once (index_db.search's items)."""
    limit = max(0, min(int(limit), MAX_LIMIT))
    held = embedder.ready(base_ids) if embedder is not None and limit else None
    if not held:
        return index.search(base_ids, q, limit)
    query = embedder.embed_query(q)
    if query is None:
        return index.search(base_ids, q, limit)
    return fused(index, held, query, base_ids, q, limit)


def fused(index: KnowledgeIndex, held: dict[str, BaseVectors], query: np.ndarray, base_ids: list[str], q: str,
          limit: int) -> list[dict]:
    """BM25 and the vectors' rankings fused: `held` has each base's vectors, `query` the query's."""
    bases = list(dict.fromkeys(base_ids))
    depth = min(CANDIDATES, max(DEPTH, 2 * limit))
    nearest = _beside.submit(_nearest, held, query, bases, depth)
    by_words = index.ranked(bases, q, depth)
    near = nearest.result()
    hashes = index.hashes([(base_id, chunk_id) for _, _, base_id, chunk_id in near])
    where: dict[str, tuple[str, int]] = {}  # passage → the chunk shown for it: BM25's first, else the nearest
    for base_id, chunk_id, digest in by_words:
        where.setdefault(digest, (base_id, chunk_id))
    by_meaning = []
    for _, _, base_id, chunk_id in near:
        found = hashes.get((base_id, chunk_id))
        if found is not None:  # else removed since the vectors were loaded
            by_meaning.append(found)
            where.setdefault(found, (base_id, chunk_id))
    best = rrf([[digest for _, _, digest in by_words], by_meaning])[:limit]
    return index.items([(*where[digest], score) for digest, score in best], q)  # type: ignore[index]


def _nearest(held: dict[str, BaseVectors], query: np.ndarray, bases: list[str],
             depth: int) -> list[tuple[float, int, str, int]]:
    """The chunks nearest the query across the bases, (cosine, base's place, base id, chunk id), nearest first."""
    near: list[tuple[float, int, str, int]] = []
    for place, base_id in enumerate(bases):
        near.extend((score, place, base_id, chunk_id) for score, chunk_id in held[base_id].top(query, depth)
                    if score > 0.0)  # unrelated to the query: no place in its ranking
    near.sort(key=lambda s: (-s[0], s[1], s[3]))
    return near
