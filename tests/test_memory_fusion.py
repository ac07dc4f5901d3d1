"""Memory's ranking by embeddings, in process: the matrix of vectors a request scores (held.py);
the fusion rule it shares with knowledge is tests/test_fusion.py's."""
from __future__ import annotations

import numpy as np

from backend.features.memory.held import Held, to_blob


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# The matrix ------------------------------------------------------------------------------------

def test_memories_are_ranked_by_cosine_best_first_above_zero_ties_older_first():
    held = Held("m").with_vectors([1, 2, 3, 4, 5], [unit(1, 0, 0), unit(1, 1, 0), unit(0, 1, 0),
                                                    unit(-1, 0, 0), unit(1, 1, 0)])
    assert len(held) == 5 and held.dim == 3
    # 2 and 5 tie: the older (smaller seq) first; 3 is orthogonal and 4 opposite: neither ranks.
    assert held.ranked(unit(1, 0, 0), 10) == [1, 2, 5]
    assert held.ranked(unit(1, 0, 0), 1) == [1]
    assert held.ranked(unit(0, 1, 0), 10) == [3, 2, 5]
    assert held.ranked(unit(1, 0), 10) == []  # a vector of another size matches nothing
    assert Held().ranked(unit(1, 0, 0), 10) == []


def test_a_memory_embedded_again_replaces_its_row_and_dropped_ones_go():
    held = Held("m").with_vectors([1, 2], [unit(1, 0), unit(0, 1)])
    again = held.with_vectors([1], [unit(0, 1)])  # memory 1 edited: now like memory 2
    assert held.ranked(unit(1, 0), 5) == [1]  # a Held is never changed
    assert again.ranked(unit(0, 1), 5) == [1, 2] and len(again) == 2
    assert again.kept({2}).ranked(unit(0, 1), 5) == [2]
    assert again.kept({1, 2}) is again


def test_a_refused_memory_is_held_as_zeros_and_blobs_load_back():
    held = Held("m").with_vectors([1, 2], [unit(1, 0), None])
    assert len(held) == 2 and held.ranked(unit(1, 0), 5) == [1]
    assert Held("m").with_vectors([3], [None]).model == "m" and len(Held("m").with_vectors([3], [None])) == 0
    loaded = Held.loaded("m", [(1, to_blob(unit(0, 1))), (2, b""), (3, to_blob(unit(1, 1)))])
    assert loaded.model == "m" and len(loaded) == 3 and to_blob(None) == b""
    assert loaded.ranked(unit(0, 1), 5) == [1, 3]
    assert loaded.matrix.dtype == np.float32
    assert not loaded.matrix[1].any()
