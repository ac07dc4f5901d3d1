"""A small embeddings model for the fake endpoint: latent semantic analysis fitted on given texts.

Real embeddings models put words that occur in the same contexts near each other, which is
what lets them find a passage written in other words than the question. Latent semantic
analysis (tf-idf, then a truncated SVD) does the same from co-occurrence in the texts it is
fitted on: the tests fit it on the documents a base holds, as a real model has read text like
them. Words it never saw add nothing; the fake's character trigrams (fake_embeddings.py) stand
in for those, so a misspelt word is still near its right spelling.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

WORD = re.compile(r"[^\W_]+")
HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)


def words(text: str, stop: frozenset[str]) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in stop and len(w) > 1 and not w.isdigit()]


class Lsa:
    """Texts → `dim`-dimensional vectors through the fitted word space (`vector`)."""

    def __init__(self, texts: list[str], dim: int, stop: frozenset[str]):
        self.stop = stop
        sections = [part for text in texts for part in HEADING.split(text) if part.strip()]
        counted = [Counter(words(s, stop)) for s in sections]
        df = Counter(w for c in counted for w in c)
        vocab = sorted(w for w, n in df.items() if n >= 2)  # a word seen once relates to nothing
        self.index = {w: i for i, w in enumerate(vocab)}
        self.idf = np.array([math.log(len(sections) / df[w]) + 1.0 for w in vocab], dtype=np.float64)
        x = np.zeros((len(sections), len(vocab)), dtype=np.float64)
        for row, c in enumerate(counted):
            for w, n in c.items():
                if w in self.index:
                    x[row, self.index[w]] = 1.0 + math.log(n)
        x *= self.idf
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        self.basis = vt[:dim].T.copy()  # vocab × dim: each word's place in the latent space

    def vector(self, text: str) -> np.ndarray:
        """The text's tf-idf folded into the latent space (zero for a text of unseen words)."""
        q = np.zeros(len(self.index), dtype=np.float64)
        for w, n in Counter(words(text, self.stop)).items():
            i = self.index.get(w)
            if i is not None:
                q[i] = (1.0 + math.log(n)) * self.idf[i]
        v = q @ self.basis
        norm = float(np.linalg.norm(v))
        return v / norm if norm else v
