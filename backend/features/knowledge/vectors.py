"""Embeddings as numpy sees them: float32 BLOBs in the index, a matrix per base in memory.

A vector is stored normalised (length 1), so cosine similarity is a dot product, and a base's
vectors are scored at once: one matrix-vector product, memory-bound (250 000 × 256 float32 is
256 MB read per query, ~30 ms on a 2-core machine). A base whose vectors would take more than
HELD_MAX_BYTES (a 768- or 1536-dimension model over a big base) is held projected instead onto
the PROJECTED principal directions of its vectors (fitted on up to SAMPLE of them): a first pass
over that picks the RESCORED best, which are scored again exactly with their full vectors read
back from the index. That bounds memory, but is approximate: how well depends on how much of
the model's vectors a few directions hold (real models' vectors are far from isotropic; the
benchmark's random-word vectors are, and keep only ~40% of their top 50 at 64 of 256).

The projected rows are kept as a few blocks (the one loaded whole, then the chunks embedded
since), each with a mask of the rows still alive: a re-indexed file appends a small block and
masks its old rows instead of copying the matrix; the blocks are merged when the dead rows or
the blocks grow many. Queries read `state` without a lock: the embedder's thread only ever
replaces it whole.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

HELD_MAX_BYTES = 400 * 2**20  # a base's vectors held whole up to this size, else projected
PROJECTED = 128  # dimensions of the first pass of a projected base
RESCORED = 500  # first-pass candidates scored again with their full vectors
SAMPLE = 8192  # vectors the projection is fitted on
REFIT_GROWTH = 4  # a base grown this many times past a projection fitted on fewer than SAMPLE is refitted
MAX_BLOCKS = 8
DEAD_SHARE = 0.2  # merge when this share of the rows is dead

Fetch = Callable[[list[int]], Iterable[tuple[int, bytes]]]  # chunk ids → (chunk id, vector BLOB)


def normalised(vector) -> np.ndarray:
    """The vector as float32 of length 1 (a zero or non-finite vector: zeros, which match nothing)."""
    v = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(v)) if v.size else 0.0
    if not np.isfinite(norm) or norm == 0.0:
        return np.zeros_like(v)
    return v / norm


def to_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


@dataclass(frozen=True)
class Block:
    ids: np.ndarray  # int64 chunk ids
    rows: np.ndarray  # float32, each id's vector projected (or whole, when the model's are small)
    alive: np.ndarray  # bool: False where the chunk was removed since


@dataclass(frozen=True)
class State:
    basis: np.ndarray | None  # dim × PROJECTED, or None: rows are the vectors themselves
    fitted_on: int  # vectors the basis was fitted on
    blocks: tuple[Block, ...]


class BaseVectors:
    """One base's vectors made by one model; `version`: the base's chunk version they cover
    (every chunk of the base embedded as of it), -1 until they do. `fetch` reads full vectors."""

    def __init__(self, model: str, fetch: Fetch):
        self.model = model
        self.fetch = fetch
        self.dim: int | None = None
        self.state = State(None, 0, ())
        self.version = -1

    @property
    def blocks(self) -> tuple[Block, ...]:
        return self.state.blocks

    @property
    def rows(self) -> int:
        return sum(int(b.alive.sum()) for b in self.state.blocks)

    @property
    def nbytes(self) -> int:
        held = sum(b.rows.nbytes + b.ids.nbytes + b.alive.nbytes for b in self.state.blocks)
        return held + (self.state.basis.nbytes if self.state.basis is not None else 0)

    def top(self, query: np.ndarray, k: int) -> list[tuple[float, int]]:
        """The `k` chunks most like the (normalised) query: (cosine, chunk id), best first."""
        state = self.state
        if k <= 0 or self.dim is None or query.shape != (self.dim,):
            return []
        first = query @ state.basis if state.basis is not None else query
        wanted = k if state.basis is None else max(k, RESCORED)
        found: list[tuple[float, int]] = []
        for block in state.blocks:
            if not len(block.ids):
                continue
            scores = block.rows @ first
            if not block.alive.all():
                scores[~block.alive] = -np.inf
            m = min(wanted, len(scores))
            best = np.argpartition(scores, len(scores) - m)[-m:] if m < len(scores) else np.arange(len(scores))
            found.extend((float(scores[i]), int(block.ids[i])) for i in best if np.isfinite(scores[i]))
        if state.basis is not None:
            found.sort(key=lambda s: (-s[0], s[1]))
            full = dict(self.fetch([chunk_id for _, chunk_id in found[:wanted]]))
            found = [(float(from_blob(blob) @ query), chunk_id) for chunk_id, blob in full.items()
                     if len(blob) == 4 * self.dim]
        found.sort(key=lambda s: (-s[0], s[1]))
        return found[:k]

    def sync(self, current: Iterable[int]) -> None:
        """Hold exactly the chunks `current` (the ids embedded now): mask the removed, load the new."""
        ids = np.fromiter(current, dtype=np.int64)
        state = self.state
        if state.basis is not None and state.fitted_on < SAMPLE and len(ids) > REFIT_GROWTH * state.fitted_on:
            state = State(None, 0, ())  # fitted on a base much smaller than it is now: fitted again
        elif state.basis is None and self.dim is not None and _too_big(len(ids), self.dim):
            state = State(None, 0, ())  # grown past what is held whole: projected from now on
        blocks = []
        for block in state.blocks:
            alive = block.alive & np.isin(block.ids, ids, assume_unique=True)
            blocks.append(block if alive.all() else Block(block.ids, block.rows, alive))
        held = np.concatenate([b.ids[b.alive] for b in blocks]) if blocks else np.empty(0, np.int64)
        new = ids[~np.isin(ids, held, assume_unique=True)]
        basis, fitted_on = state.basis, state.fitted_on
        if len(new):
            basis, fitted_on, added = self._load([int(i) for i in new], basis, fitted_on,
                                                 fresh=not blocks, total=len(ids))
            if added is not None:
                blocks.append(added)
        self.state = State(basis, fitted_on, tuple(_merged(blocks)))

    def _load(self, ids: list[int], basis: np.ndarray | None, fitted_on: int, fresh: bool,
              total: int) -> tuple[np.ndarray | None, int, Block | None]:
        """The vectors of `ids` as a block: projected by `basis`, or one fitted first when `fresh`
        and the base's `total` vectors are too many to hold whole."""
        rows: np.ndarray | None = None  # filled in place: 250 000 bytes objects would hold the vectors twice
        got = np.empty(len(ids), dtype=np.int64)
        k = 0
        sample: list[tuple[int, np.ndarray]] = []  # full vectors waiting for the basis to be fitted

        def put(chunk_id: int, v: np.ndarray) -> None:
            nonlocal rows, k
            r = v @ basis if basis is not None else v
            if rows is None:
                rows = np.empty((len(ids), r.size), dtype=np.float32)
            rows[k] = r
            got[k] = chunk_id
            k += 1

        def fit() -> None:
            nonlocal basis, fitted_on
            basis, fitted_on = _fitted(np.stack([v for _, v in sample])), len(sample)
            for chunk_id, v in sample:
                put(chunk_id, v)
            sample.clear()

        fitting = fresh and basis is None
        for chunk_id, blob in self.fetch(ids):
            v = from_blob(blob or b"")
            if self.dim is None and v.size:
                self.dim = v.size
            if v.size != self.dim:
                continue  # not embedded (refused by the model), or another size: matches nothing
            if fitting and self.dim > PROJECTED and _too_big(total, self.dim):
                sample.append((chunk_id, v))
                if len(sample) >= SAMPLE:
                    fit()
                    fitting = False
                continue
            put(chunk_id, v)
        if sample:
            fit()
        if rows is None or k == 0:
            return basis, fitted_on, None
        return basis, fitted_on, Block(got[:k], rows[:k], np.ones(k, dtype=bool))


def _too_big(rows: int, dim: int) -> bool:
    return rows * dim * 4 > HELD_MAX_BYTES


def _fitted(sample: np.ndarray) -> np.ndarray:
    """The PROJECTED directions that keep most of the sample's dot products (dim × PROJECTED)."""
    # Uncentred: what is kept is x · q, not the variance around a mean.
    values, vectors = np.linalg.eigh(sample.T.astype(np.float64) @ sample)
    return np.ascontiguousarray(vectors[:, ::-1][:, :PROJECTED], dtype=np.float32)


def _merged(blocks: list[Block]) -> list[Block]:
    total = sum(len(b.ids) for b in blocks)
    dead = total - sum(int(b.alive.sum()) for b in blocks)
    if len(blocks) <= MAX_BLOCKS and dead <= DEAD_SHARE * max(total, 1):
        return blocks
    alive = [b for b in blocks if b.alive.any()]
    if not alive:
        return []
    ids = np.concatenate([b.ids[b.alive] for b in alive])
    rows = np.concatenate([b.rows[b.alive] for b in alive])
    return [Block(ids, rows, np.ones(len(ids), dtype=bool))]
