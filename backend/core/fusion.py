"""Reciprocal rank fusion: one ranking from several, by the places each item holds in them.

An item's score is the sum over the rankings of 1 / (k + its place), places from 1; an item
missing from a ranking gets nothing from it. Only places count, so BM25's unbounded scores
and cosine similarities never need to be put on one scale. k = 60 (Cormack, Clarke and
Büttcher, 2009) keeps one ranking's first place from outweighing agreement between them.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

K = 60


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = K) -> list[tuple[Hashable, float]]:
    """(item, fused score), best first; ties go to the item placed best in any ranking, then to
    the earlier ranking. An item repeated within a ranking counts at its first place."""
    scores: dict[Hashable, float] = {}
    best: dict[Hashable, tuple[int, int]] = {}  # item → (its best place, the ranking it holds it in)
    for which, ranking in enumerate(rankings):
        seen: set[Hashable] = set()
        for place, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + place)
            if item not in best or (place, which) < best[item]:
                best[item] = (place, which)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]]))
