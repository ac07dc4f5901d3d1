"""Reciprocal rank fusion (backend/core/fusion.py), the rule knowledge search and memory both rank by."""
from __future__ import annotations

import pytest

from backend.core.fusion import K, rrf


def order(rankings) -> list:
    return [item for item, _ in rrf(rankings)]


def test_reciprocal_rank_fusion_orders_by_both_rankings():
    fused = rrf([["a", "b", "c"], ["c", "a", "d"]])
    assert [item for item, _ in fused] == ["a", "c", "b", "d"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62) and scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62) and scores["d"] == pytest.approx(1 / 63)
    # Equal scores: the one placed better somewhere first, then the earlier ranking's; repeats count once.
    assert [i for i, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [i for i, _ in rrf([["p", "p", "q"], []])] == ["p", "q"]


def test_agreement_outweighs_one_rankings_first_place():
    # 30 is third by words and first by meaning: 1/63 + 1/61 beats 10's 1/61 alone.
    assert order([[10, 20, 30], [30, 40]]) == [30, 10, 20, 40]


def test_a_tie_goes_to_the_better_place_then_to_the_full_text_ranking():
    # 20 and 40 are both second once (1/62): by words comes first.
    assert order([[10, 20], [30, 40]]) == [10, 30, 20, 40]
    assert order([[10], [30, 40, 50]]) == [10, 30, 40, 50]


def test_one_ranking_alone_keeps_its_order():
    # No embeddings ranking (or an empty one): the full-text order as it was.
    assert order([[5, 3, 9, 1], []]) == [5, 3, 9, 1]
    assert order([[], [7, 2]]) == [7, 2]
    assert order([[], []]) == []


def test_scores_are_reciprocal_ranks_with_k_60_and_a_repeat_counts_once():
    assert K == 60
    # 1 is first and 2 second in both; a repeat of 1 further down adds nothing.
    assert order([[1, 2, 1], [1, 2]]) == [1, 2]
    # Places, not scores: 9 placed 2nd and 2nd (2/62) beats 8 placed 1st and 4th (1/61 + 1/64).
    assert 2 / (K + 2) > 1 / (K + 1) + 1 / (K + 4)
    assert order([[8, 9, 5], [6, 9, 7, 8]]) == [9, 8, 6, 5, 7]
