"""Memories' vectors held in memory: one numpy matrix by one model, a row per memory (seq → row).

Vectors are normalised, so cosine similarity is a dot product and every memory is scored at once
(1 000 × 768 float32: 3 MB, well under a millisecond). A `Held` is never changed: the embedding
thread makes a new one and swaps it in whole, so a request reads it without a lock.
"""
from __future__ import annotations

import numpy as np


def to_blob(vector) -> bytes:
    return b"" if vector is None else np.ascontiguousarray(vector, dtype="<f4").tobytes()


def _rows(vectors: list, dim: int) -> np.ndarray:
    """The vectors as a float32 matrix; one refused or of another size: zeros (it matches nothing)."""
    out = np.zeros((len(vectors), dim), dtype=np.float32)
    for i, v in enumerate(vectors):
        if v is not None and v.size == dim:
            out[i] = v
    return out


class Held:
    """The vectors by `model` (None: none held) of the memories `seqs`, row for row."""

    def __init__(self, model: str | None = None, seqs: np.ndarray | None = None, matrix: np.ndarray | None = None):
        self.model = model
        self.seqs = seqs if seqs is not None else np.zeros(0, dtype=np.int64)
        self.matrix = matrix if matrix is not None else np.zeros((0, 0), dtype=np.float32)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return int(self.seqs.size)

    @classmethod
    def loaded(cls, model: str, rows: list[tuple[int, bytes]]) -> Held:
        """From the table's (seq, BLOB) rows."""
        vectors = [np.frombuffer(blob, dtype="<f4") if blob else None for _, blob in rows]
        return cls(model).with_vectors([seq for seq, _ in rows], vectors)

    def with_vectors(self, seqs: list[int], vectors: list) -> Held:
        """These memories' vectors added, or put in place of the ones held."""
        dim = self.dim if len(self) else next((v.size for v in vectors if v is not None and v.size), 0)
        if not dim:
            return self  # nothing but refusals yet: nothing a query could match
        replaced = set(seqs)
        keep = np.array([int(s) not in replaced for s in self.seqs], dtype=bool)
        matrix = np.vstack([self.matrix[keep].reshape(-1, dim), _rows(vectors, dim)])
        ordered = np.concatenate([self.seqs[keep], np.asarray(seqs, dtype=np.int64)])
        return Held(self.model, ordered, matrix)

    def kept(self, seqs: set[int]) -> Held:
        """Only the memories among `seqs` (the others were deleted or changed)."""
        keep = np.array([int(s) in seqs for s in self.seqs], dtype=bool)
        return self if keep.all() else Held(self.model, self.seqs[keep], self.matrix[keep])

    def ranked(self, query: np.ndarray, limit: int) -> list[int]:
        """The seqs of the `limit` memories most like the query, best first (those scoring above 0)."""
        if not len(self) or query.size != self.dim:
            return []
        scores = self.matrix @ query
        n = min(limit, scores.size)
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.lexsort((self.seqs[best], -scores[best]))]  # ties: the older memory first
        return [int(self.seqs[i]) for i in best if scores[i] > 0]
