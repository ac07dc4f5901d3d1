"""The knowledge bases' derived index: documents, their chunks and an FTS5 index of them, in
<data-dir>/knowledge/index.db.

A file of its own: it can always be rebuilt from the files, so it stays out of backups, and
the indexer's writes never contend with the chat database's.

- Each base has its own tables, chunks_<n> and its FTS5 index fts_<n> (n: the base's number in
  `bases`): removing a base drops two tables instead of un-indexing every chunk (FTS5 must
  re-read a row's text to delete it: ~20 s for 250 000 chunks), and a query on a small base
  never pays for a big one's posting lists. Documents share one table.
- chunks_<n> is its index's external content: a chunk's text is stored once, and snippet()
  reads it back from there. (A contentless index can only delete a row given its text too,
  in this SQLite.)
- The index has two columns, the chunk's `title` (its document's title, then its heading) and
  its `text`, weighed by bm25 (TITLE_WEIGHT, 1), Porter-stemmed, accents removed.
- One writer connection behind a lock (the indexer's thread and a request removing a base queue
  here rather than on SQLite's busy timeout), and a small pool of reader connections: the HTTP
  server starts a thread per request, so a connection per thread would be one per request.
  WAL: readers never wait for the writer.
- Embeddings (embeddings.py) go in a chunk's `vector` (float32, normalised: vectors.py) with the
  `model` that made it; a chunk kept by a re-index keeps them, so only what changed is embedded
  again. An index on `model` finds what is left to embed without reading the chunks' text.
- Each base's chunks have a version in memory, raised after every write that adds or removes
  chunks: the embedder knows a base is fully embedded "as of version v" without counting.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.features.knowledge.fts_query import all_of, any_of, terms
from backend.features.knowledge.types import Chunk

SCHEMA_VERSION = 1
TITLE_WEIGHT = 4.0
MAX_LIMIT = 50
SNIPPET_TOKENS = 24
BUSY_TIMEOUT_MS = 5000
IDLE_READERS = 4  # reader connections kept open between calls; more may be open at once
# Chunks a query weighs with bm25, at most, per base: weighing costs ~2.5 µs a chunk (its
# size is read, its hits counted), and a common word is in a third of a big base's chunks.
BUDGET = 3000

INDEXED, PENDING, UNREADABLE = "indexed", "pending", "unreadable"

_SCHEMA = (
    # AUTOINCREMENT: a removed base's number and a removed document's id are never reused, so
    # nothing can mistake another base's tables, or another document, for them.
    "CREATE TABLE bases (n INTEGER PRIMARY KEY AUTOINCREMENT, base_id TEXT NOT NULL UNIQUE)",
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        base_id TEXT NOT NULL,
        key TEXT NOT NULL,
        path TEXT,
        file_id TEXT,
        title TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL DEFAULT 'pending',
        reason TEXT,
        mtime REAL,
        size INTEGER,
        chunks INTEGER NOT NULL DEFAULT 0,
        indexed_at REAL,
        UNIQUE (base_id, key))""",
)

# What is left to embed for a model, and what a model embedded, without reading the chunks' rows
# (their text runs over several pages, and `model` comes after it).
_MODEL_INDEX = "CREATE INDEX IF NOT EXISTS chunks_{n}_model ON chunks_{n} (model)"

# A base's tables. AUTOINCREMENT: a chunk id is never reused, so an id handed out (a search
# result) never names another passage later. title: what the index's title column holds;
# vector and model: the chunk's embedding and the model that made it (a later change;
# nullable, so it needs no rebuild).
_BASE_SCHEMA = (
    """CREATE TABLE chunks_{n} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        title TEXT NOT NULL,
        text TEXT NOT NULL,
        locator TEXT NOT NULL,
        hash TEXT NOT NULL,
        vector BLOB,
        model TEXT)""",
    "CREATE INDEX chunks_{n}_document ON chunks_{n} (document_id, seq)",
    _MODEL_INDEX,
    """CREATE VIRTUAL TABLE fts_{n} USING fts5(
        title, text, content='chunks_{n}', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
)


class KnowledgeIndex:
    """The index file: what the indexer writes, and what queries and the documents list read."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._closed = False
        self._versions: dict[str, int] = {}  # base id → raised after each commit that adds or removes chunks
        self._writer = self._open()

    # Connections ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Created private whatever the umask: it holds the files' text.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        # check_same_thread=False: a connection moves between threads (the pool hands it to
        # whichever asks), but only one uses it at a time — the lock or the pool sees to it.
        con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                              timeout=BUSY_TIMEOUT_MS / 1000)
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        con.execute("PRAGMA journal_mode = WAL")
        # NORMAL: a power cut may lose the last commits; the indexer reads those files again.
        con.execute("PRAGMA synchronous = NORMAL")
        # FAST: what is deleted is zeroed where that costs no extra writes. The build's default
        # (ON) zeroes every freed page too, so removing a base of 250 000 chunks wrote ~370 MB
        # to the WAL and took 4 s instead of 0.2 s; its text is a copy of the person's files.
        con.execute("PRAGMA secure_delete = FAST")
        con.execute("PRAGMA journal_size_limit = 67108864")  # a WAL grown by a big write shrinks back
        # Checkpoint every ~40 MB of WAL rather than the default ~4 MB: indexing 1 500 files went
        # from 168 to 212 files/s, the fsyncs of frequent checkpoints being most of a commit's cost.
        con.execute("PRAGMA wal_autocheckpoint = 10000")
        return con

    def _open(self) -> sqlite3.Connection:
        """The writer connection, on a file holding this version's schema."""
        con: sqlite3.Connection | None = None
        try:
            con = self._connect()
            version = con.execute("PRAGMA user_version").fetchone()[0]
            empty = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        except sqlite3.DatabaseError:  # not a database, or damaged
            version, empty = -1, False
        if con is not None and version == SCHEMA_VERSION:
            # Bases made before the index on `model` get it (once; IF NOT EXISTS).
            for (n,) in con.execute("SELECT n FROM bases").fetchall():
                con.execute(_MODEL_INDEX.format(n=n))
            return con
        if con is None or not (version == 0 and empty):
            # Another version's schema (older, or newer and unknown) or a damaged file: the
            # index is derived from the files, so it starts again empty and the indexer reads
            # every file again.
            if con is not None:
                con.close()
            for name in (self.path.name, self.path.name + "-wal", self.path.name + "-shm"):
                (self.path.parent / name).unlink(missing_ok=True)
            con = self._connect()
        con.execute("BEGIN IMMEDIATE")
        try:
            for sql in _SCHEMA:
                con.execute(sql)
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            con.execute("ROLLBACK")
            con.close()
            raise
        con.execute("COMMIT")
        return con

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A reader connection, in one read transaction: what it reads is of one moment."""
        with self._pool_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the knowledge index is closed")
            con = self._idle.pop() if self._idle else None
        if con is None:
            con = self._connect()
        try:
            con.execute("BEGIN")
            try:
                yield con
            finally:
                con.execute("COMMIT")
        finally:
            with self._pool_lock:
                keep = not self._closed and len(self._idle) < IDLE_READERS
                if keep:
                    self._idle.append(con)
            if not keep:
                con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction on the writer connection; rolled back if the block raises."""
        with self._write_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the knowledge index is closed")
            con = self._writer
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def close(self) -> None:
        """Close every connection; calls after this raise."""
        with self._write_lock, self._pool_lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            for con in idle:
                con.close()
            self._writer.close()

    # Writes -----------------------------------------------------------------------------

    def upsert_pending(self, base_id: str, key: str, title: str, path: str | None = None,
                       file_id: str | None = None) -> int:
        """The document `key` of a base (its absolute path, or "file:<id>"), marked for reading; its id.

        A document indexed before keeps its chunks (still found) and its title until it is read again."""
        with self._write() as con:
            _base_number(con, base_id, create=True)
            return con.execute(
                """INSERT INTO documents (base_id, key, path, file_id, title, status) VALUES (?, ?, ?, ?, ?, 'pending')
                ON CONFLICT (base_id, key) DO UPDATE SET path = excluded.path, file_id = excluded.file_id,
                    title = CASE WHEN chunks > 0 THEN title ELSE excluded.title END,
                    status = 'pending', reason = NULL
                RETURNING id""", (base_id, key, path, file_id, title)).fetchone()[0]

    def replace_document(self, doc_id: int, title: str, chunks: list[Chunk], mtime: float | None,
                         size: int | None) -> None:
        """The document's chunks are now `chunks`, and it is indexed (a document since removed is left so).

        A chunk whose hash is unchanged keeps its row, id and embedding; only the others are
        deleted and inserted, in one transaction."""
        with self._write() as con:
            found = _document_base(con, doc_id)
            if found is None:
                return
            n, base_id = found
            old = con.execute(f"SELECT id, hash, seq, title FROM chunks_{n} WHERE document_id = ? ORDER BY seq",
                              (doc_id,)).fetchall()
            free: dict[str, list[tuple[int, int, str]]] = {}  # hash → rows not matched yet, in order
            for row_id, digest, seq, row_title in old:
                free.setdefault(digest, []).append((row_id, seq, row_title))
            kept: set[int] = set()
            moved: list[tuple[int, int]] = []  # (seq, id) of kept rows whose place changed
            retitled: list[tuple[str, int, int]] = []  # kept rows whose document's title changed
            added: list[tuple[int, str, str, str, str]] = []
            for seq, chunk in enumerate(chunks):
                chunk_title = _chunk_title(title, chunk.locator)
                same = free.get(chunk.hash)
                if same:
                    row_id, old_seq, old_title = same.pop(0)
                    kept.add(row_id)
                    if old_title != chunk_title:
                        retitled.append((chunk_title, seq, row_id))
                    elif old_seq != seq:
                        moved.append((seq, row_id))
                else:
                    added.append((seq, chunk_title, chunk.text, _dumps(chunk.locator), chunk.hash))
            gone = [row[0] for row in old if row[0] not in kept]
            if gone:
                _unindex(con, n, gone)
                con.execute(f"DELETE FROM chunks_{n} WHERE id IN (SELECT value FROM json_each(?))",
                            (json.dumps(gone),))
            if retitled:
                ids = [r[2] for r in retitled]
                _unindex(con, n, ids)
                con.executemany(f"UPDATE chunks_{n} SET title = ?, seq = ? WHERE id = ?", retitled)
                con.execute(f"INSERT INTO fts_{n} (rowid, title, text) SELECT id, title, text FROM chunks_{n}"
                            " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))
            if moved:
                con.executemany(f"UPDATE chunks_{n} SET seq = ? WHERE id = ?", moved)
            if added:
                # Ids given here rather than read back one insert at a time: executemany, and the
                # index's rows are written from the same list.
                first = con.execute(f"SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks_{n}'),"
                                    f" 0), coalesce((SELECT max(id) FROM chunks_{n}), 0)) + 1").fetchone()[0]
                rows = [(first + k, doc_id, *row) for k, row in enumerate(added)]
                con.executemany(f"INSERT INTO chunks_{n} (id, document_id, seq, title, text, locator, hash)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                con.executemany(f"INSERT INTO fts_{n} (rowid, title, text) VALUES (?, ?, ?)",
                                [(r[0], r[3], r[4]) for r in rows])
            con.execute("UPDATE documents SET title = ?, status = 'indexed', reason = NULL, mtime = ?, size = ?,"
                        " chunks = ?, indexed_at = ? WHERE id = ?",
                        (title, mtime, size, len(chunks), time.time(), doc_id))
        if gone or added:
            self._changed(base_id)

    def mark_unreadable(self, doc_id: int, reason: str) -> None:
        """The document cannot be read (`reason` is for the person); what was indexed of it goes."""
        with self._write() as con:
            found = _document_base(con, doc_id)
            if found is None:
                return
            _remove_chunks(con, found[0], doc_id)
            con.execute("UPDATE documents SET status = 'unreadable', reason = ?, chunks = 0, indexed_at = ?"
                        " WHERE id = ?", (reason, time.time(), doc_id))
        self._changed(found[1])

    def remove_document(self, doc_id: int) -> None:
        """The document and its chunks."""
        with self._write() as con:
            found = _document_base(con, doc_id)
            if found is not None:
                _remove_chunks(con, found[0], doc_id)
            con.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        if found is not None:
            self._changed(found[1])

    def remove_base(self, base_id: str) -> None:
        """Every document and chunk of a base."""
        with self._write() as con:
            n = _base_number(con, base_id)
            con.execute("DELETE FROM documents WHERE base_id = ?", (base_id,))
            if n is not None:
                con.execute(f"DROP TABLE fts_{n}")
                con.execute(f"DROP TABLE chunks_{n}")
                con.execute("DELETE FROM bases WHERE n = ?", (n,))
        self._changed(base_id)

    # Reads ------------------------------------------------------------------------------

    def documents(self, base_id: str) -> list[dict]:
        """The base's documents, by key: [{id, path | file_id, title, status, reason?, chunks}]."""
        with self._read() as con:
            rows = con.execute("SELECT id, path, file_id, title, status, reason, chunks FROM documents"
                               " WHERE base_id = ? ORDER BY key", (base_id,)).fetchall()
        out = []
        for doc_id, path, file_id, title, status, reason, n in rows:
            item = {"id": doc_id, **_where(path, file_id), "title": title, "status": status, "chunks": n}
            if reason:
                item["reason"] = reason
            out.append(item)
        return out

    def document(self, base_id: str, doc_id: int) -> dict | None:
        """One document of the base, {id, title, path | file_id, chunks: [{locator, text}]} with its
        chunks in reading order; None if the base holds no such document."""
        with self._read() as con:
            row = con.execute("SELECT id, path, file_id, title FROM documents WHERE id = ? AND base_id = ?",
                              (doc_id, base_id)).fetchone()
            n = _base_number(con, base_id)
            chunks = [] if row is None or n is None else con.execute(
                f"SELECT locator, text FROM chunks_{n} WHERE document_id = ? ORDER BY seq", (doc_id,)).fetchall()
        if row is None:
            return None
        return {"id": row[0], "title": row[3], **_where(row[1], row[2]),
                "chunks": [{"locator": json.loads(loc), "text": text} for loc, text in chunks]}

    def document_by_key(self, base_id: str, key: str) -> dict | None:
        """{id, mtime, size, status} of the base's document `key`, or None: has the file changed?"""
        with self._read() as con:
            row = con.execute("SELECT id, mtime, size, status FROM documents WHERE base_id = ? AND key = ?",
                              (base_id, key)).fetchone()
        return None if row is None else {"id": row[0], "mtime": row[1], "size": row[2], "status": row[3]}

    def counts(self, base_id: str) -> tuple[int, int]:
        """(documents indexed, chunks held) of a base."""
        with self._read() as con:
            indexed, chunks = con.execute(
                "SELECT count(*) FILTER (WHERE status = 'indexed'), coalesce(sum(chunks), 0) FROM documents"
                " WHERE base_id = ?", (base_id,)).fetchone()
        return indexed, chunks

    def problems(self, base_id: str) -> list[dict]:
        """The base's unreadable documents, [{path, reason}] (path: the file's path, else its key)."""
        with self._read() as con:
            rows = con.execute("SELECT coalesce(path, key), reason FROM documents WHERE base_id = ?"
                               " AND status = 'unreadable' ORDER BY key", (base_id,)).fetchall()
        return [{"path": path, "reason": reason or ""} for path, reason in rows]

    def search(self, base_ids: list[str], q: str, limit: int = 8) -> list[dict]:
        """The best chunks of the bases for a natural-language query, best first, each passage once.

        Items: {title, file, snippet, score (bm25, higher is better), locator, document_id, base_id,
        chunk_id (unique within its base), text}. A query with no usable word finds nothing."""
        words = terms(q)
        return self._search(base_ids, limit, words=words) if words else []

    def _search(self, base_ids: list[str], limit: int, words: list[str] | None = None,
                match: str | None = None) -> list[dict]:
        """search() for the words, or (the benchmark's baseline) for one MATCH expression weighed whole."""
        bases = list(dict.fromkeys(base_ids))
        with self._read() as con:
            chosen, rows = _best(con, bases, limit, words, match)
            snippets = _snippets(con, chosen, match or any_of(words or []))
        return [_item(rows[(n, chunk_id)], bases[place], chunk_id, score, snippets.get((n, chunk_id), ""))
                for score, place, n, chunk_id in chosen]

    def ranked(self, base_ids: list[str], q: str, limit: int) -> list[tuple[str, int, str]]:
        """search()'s ranking without building its items: (base id, chunk id, hash), best first, each passage once."""
        words = terms(q)
        if not words:
            return []
        bases = list(dict.fromkeys(base_ids))
        with self._read() as con:
            chosen, rows = _best(con, bases, limit, words, None)
        return [(bases[place], chunk_id, rows[(n, chunk_id)]["hash"]) for _score, place, n, chunk_id in chosen]

    def hashes(self, hits: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """The hash of each (base id, chunk id) still held."""
        out: dict[tuple[str, int], str] = {}
        with self._read() as con:
            for base_id, ids in _by_base(hits).items():
                n = _base_number(con, base_id)
                if n is None:
                    continue
                for chunk_id, digest in con.execute(f"SELECT id, hash FROM chunks_{n} WHERE id IN"
                                                    f" (SELECT value FROM json_each(?))", (json.dumps(ids),)):
                    out[(base_id, chunk_id)] = digest
        return out

    def items(self, hits: list[tuple[str, int, float]], q: str) -> list[dict]:
        """search()'s items for chunks chosen elsewhere, (base id, chunk id, score), in that order.

        A chunk no longer held is left out; one holding none of the query's words gets the start
        of its text as its snippet."""
        words = terms(q)
        numbers: dict[str, int | None] = {}
        with self._read() as con:
            for base_id, _chunk_id, _score in hits:
                if base_id not in numbers:
                    numbers[base_id] = _base_number(con, base_id)
            scored = [(score, 0, numbers[b], chunk_id) for b, chunk_id, score in hits if numbers[b] is not None]
            rows = _rows(con, scored)  # type: ignore[arg-type]  # None numbers were left out above
            snippets = _snippets(con, scored, any_of(words)) if words else {}  # type: ignore[arg-type]
        out = []
        for base_id, chunk_id, score in hits:
            n = numbers[base_id]
            row = rows.get((n, chunk_id)) if n is not None else None
            if row is not None:
                snippet = snippets.get((n, chunk_id)) or _opening(row["text"])
                out.append(_item(row, base_id, chunk_id, score, snippet))
        return out

    # Embeddings -------------------------------------------------------------------------

    def _changed(self, base_id: str) -> None:
        # After the commit: whoever reads the new version then also sees the rows it counts.
        with self._pool_lock:
            self._versions[base_id] = self._versions.get(base_id, 0) + 1

    def version(self, base_id: str) -> int:
        """A number raised each time chunks of the base are added or removed (in this process)."""
        return self._versions.get(base_id, 0)

    def base_ids(self) -> list[str]:
        """Every base the index holds chunks for, oldest first."""
        with self._read() as con:
            return [row[0] for row in con.execute("SELECT base_id FROM bases ORDER BY n")]

    def unembedded(self, base_id: str, model: str, limit: int) -> list[tuple[int, str, str, str]]:
        """(chunk id, hash, title, text) of up to `limit` chunks not embedded by `model`, oldest first."""
        with self._read() as con:
            n = _base_number(con, base_id)
            if n is None:
                return []
            # Three ranges of the index on `model` rather than `model IS NOT ?`, which SQLite
            # answers by reading every row.
            ids = [row[0] for row in con.execute(
                f"SELECT id FROM chunks_{n} WHERE model IS NULL UNION ALL SELECT id FROM chunks_{n} WHERE model < ?"
                f" UNION ALL SELECT id FROM chunks_{n} WHERE model > ? LIMIT ?", (model, model, limit))]
            if not ids:
                return []
            return con.execute(f"SELECT id, hash, title, text FROM chunks_{n} WHERE id IN"
                               f" (SELECT value FROM json_each(?)) ORDER BY id", (json.dumps(ids),)).fetchall()

    def store_vectors(self, base_id: str, model: str, rows: list[tuple[int, str, bytes]]) -> int:
        """Save embeddings, (chunk id, the hash embedded, vector); one whose chunk changed since is
        dropped. How many were saved."""
        with self._write() as con:
            n = _base_number(con, base_id)
            if n is None:
                return 0
            before = con.total_changes
            con.executemany(f"UPDATE chunks_{n} SET vector = ?, model = ? WHERE id = ? AND hash = ?",
                            [(blob, model, chunk_id, digest) for chunk_id, digest, blob in rows])
            return con.total_changes - before

    def embedded_ids(self, base_id: str, model: str) -> list[int]:
        """The ids of the base's chunks embedded by `model`, ascending."""
        with self._read() as con:
            n = _base_number(con, base_id)
            if n is None:
                return []
            return [row[0] for row in con.execute(f"SELECT id FROM chunks_{n} WHERE model = ? ORDER BY id",
                                                  (model,))]

    def vectors(self, base_id: str, model: str, ids: list[int]) -> Iterator[tuple[int, bytes]]:
        """(chunk id, vector) of those of `ids` embedded by `model`, read a page of ids at a time."""
        page = 2000
        for at in range(0, len(ids), page):
            with self._read() as con:
                n = _base_number(con, base_id)
                if n is None:
                    return
                rows = con.execute(f"SELECT id, vector FROM chunks_{n} WHERE id IN (SELECT value FROM json_each(?))"
                                   f" AND model = ?", (json.dumps(ids[at:at + page]), model)).fetchall()
            yield from rows

    def embedding_counts(self, base_id: str, model: str) -> tuple[int, int]:
        """(chunks embedded by `model`, chunks) of a base."""
        with self._read() as con:
            n = _base_number(con, base_id)
            if n is None:
                return 0, 0
            done = con.execute(f"SELECT count(*) FROM chunks_{n} WHERE model = ?", (model,)).fetchone()[0]
            total = con.execute(f"SELECT count(*) FROM chunks_{n}").fetchone()[0]
        return done, total


def _best(con: sqlite3.Connection, bases: list[str], limit: int, words: list[str] | None,
          match: str | None) -> tuple[list[tuple[float, int, int, int]], dict]:
    """The best chunks, (score, base's place, n, chunk id), each passage once, and their rows."""
    limit = max(0, min(int(limit), MAX_LIMIT))
    if not limit or not bases:
        return [], {}
    wanted = 2 * limit + 10  # candidates per base: room for duplicates
    scored: list[tuple[float, int, int, int]] = []  # (score, base's place, n, chunk id)
    numbers = [(place, _base_number(con, b)) for place, b in enumerate(bases)]
    for place, n in numbers:
        if n is None:
            continue
        found = _candidates(con, n, words, wanted) if words else _ranked(con, n, match or "", wanted)
        scored.extend((score, place, n, chunk_id) for chunk_id, score in found.items())
    # Best first; ties in the order the bases were given, then by chunk.
    scored.sort(key=lambda s: (-s[0], s[1], s[3]))
    rows = _rows(con, scored)
    chosen: list[tuple[float, int, int, int]] = []
    seen: set[str] = set()
    for item in scored:
        row = rows.get((item[2], item[3]))
        # The same passage is the same hash: one file in two bases, or two copies of a file.
        if row is None or row["hash"] in seen:
            continue
        seen.add(row["hash"])
        chosen.append(item)
        if len(chosen) >= limit:
            break
    return chosen, rows


def _item(row: dict, base_id: str, chunk_id: int, score: float, snippet: str) -> dict:
    return {"title": row["title"], "file": row["path"] if row["path"] is not None else row["file_id"],
            "snippet": snippet, "score": score, "locator": json.loads(row["locator"]),
            "document_id": row["document_id"], "base_id": base_id, "chunk_id": chunk_id, "text": row["text"]}


def _opening(text: str) -> str:
    """The first SNIPPET_TOKENS words of a text: the snippet of a chunk found by meaning, not words."""
    words = text.split()
    return " ".join(words[:SNIPPET_TOKENS]) + ("…" if len(words) > SNIPPET_TOKENS else "")


def _by_base(hits) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for hit in hits:
        out.setdefault(hit[0], []).append(hit[1])
    return out


def _candidates(con: sqlite3.Connection, n: int, words: list[str], wanted: int) -> dict[int, float]:
    """The base's best chunks for the words (chunk id → bm25 score), weighing at most ~2 × BUDGET chunks.

    Scores are bm25 of all the words OR'ed; what is bounded is which chunks are weighed:
    - the rare words (together in at most BUDGET chunks) pick the candidates, and the common
      words add to the score of those holding them;
    - only when no chunk holds a rare word, the chunks holding all the common words, then any
      of them, are weighed among their newest BUDGET matches."""
    counts = {w: _count(con, n, w) for w in words}
    by_rarity = sorted(words, key=lambda w: counts[w])
    rare: list[str] = []
    total = 0
    for w in by_rarity:
        if total + counts[w] > BUDGET:
            break
        rare.append(w)
        total += counts[w]
    common = [w for w in words if w not in rare]
    found: dict[int, float] = {}

    def add(more: dict[int, float]) -> None:
        for chunk_id, score in more.items():
            found[chunk_id] = max(score, found.get(chunk_id, score))

    if rare:
        add(_ranked(con, n, any_of(rare), wanted))
        if common:
            # The same chunks weighed with the common words too: a chunk's bm25 is the sum of its
            # words' parts, so this is the whole query's score for those holding a common word.
            add(_ranked(con, n, f"({any_of(rare)}) AND ({any_of(common)})", wanted))
    if len(found) < wanted and common:
        add(_ranked(con, n, all_of(common), wanted, newest=BUDGET))
        if len(found) < wanted and len(common) > 1:
            add(_ranked(con, n, any_of(common), wanted, newest=BUDGET))
    return found


def _count(con: sqlite3.Connection, n: int, word: str) -> int:
    """How many of the base's chunks hold the word, counted up to BUDGET + 1."""
    return con.execute(f"SELECT count(*) FROM (SELECT 1 FROM fts_{n} WHERE fts_{n} MATCH ? LIMIT ?)",
                       (any_of([word]), BUDGET + 1)).fetchone()[0]


def _ranked(con: sqlite3.Connection, n: int, match: str, wanted: int, newest: int | None = None) -> dict[int, float]:
    """The best `wanted` chunks matching (chunk id → score); with `newest`, among the newest matches only."""
    bound, params = "", [match]
    if newest is not None:
        edge = con.execute(f"SELECT rowid FROM fts_{n} WHERE fts_{n} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                           (match, newest - 1)).fetchone()
        if edge is not None:
            bound, params = " AND rowid >= ?", [match, edge[0]]
    # bm25() rather than the rank column: SQLite keeps the best `wanted` as it goes, where FTS5's
    # own ORDER BY rank sorts every match.
    rows = con.execute(f"SELECT rowid, bm25(fts_{n}, {TITLE_WEIGHT}, 1.0) AS s FROM fts_{n}"
                       f" WHERE fts_{n} MATCH ?{bound} ORDER BY s LIMIT ?", (*params, wanted)).fetchall()
    return {chunk_id: -s for chunk_id, s in rows}  # bm25() is lower for better matches


def _rows(con: sqlite3.Connection, scored: list[tuple[float, int, int, int]]) -> dict[tuple[int, int], dict]:
    """The chunks (and their documents) of the scored candidates, by (base number, chunk id)."""
    ids: dict[int, list[int]] = {}
    for _score, _place, n, chunk_id in scored:
        ids.setdefault(n, []).append(chunk_id)
    out = {}
    for n, chunk_ids in ids.items():
        for row in con.execute(
                f"SELECT c.id, c.document_id, c.text, c.locator, c.hash, d.title, d.path, d.file_id"
                f" FROM chunks_{n} c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.id IN (SELECT value FROM json_each(?))", (json.dumps(chunk_ids),)):
            out[(n, row[0])] = dict(zip(("id", "document_id", "text", "locator", "hash", "title", "path", "file_id"),
                                        row))
    return out


def _snippets(con: sqlite3.Connection, chosen: list[tuple[float, int, int, int]], match: str) -> dict:
    """A short plain-text excerpt of each chosen chunk around what matched (no highlight markers)."""
    ids: dict[int, list[int]] = {}
    for _score, _place, n, chunk_id in chosen:
        ids.setdefault(n, []).append(chunk_id)
    out = {}
    for n, chunk_ids in ids.items():
        marks = ",".join("?" * len(chunk_ids))
        for chunk_id, text in con.execute(
                f"SELECT rowid, snippet(fts_{n}, 1, '', '', '…', {SNIPPET_TOKENS}) FROM fts_{n}"
                f" WHERE fts_{n} MATCH ? AND rowid IN ({marks})", (match, *chunk_ids)):
            out[(n, chunk_id)] = text
    return out


def _base_number(con: sqlite3.Connection, base_id: str, create: bool = False) -> int | None:
    """The number naming the base's tables; with `create`, the tables are made if missing."""
    row = con.execute("SELECT n FROM bases WHERE base_id = ?", (base_id,)).fetchone()
    if row is not None or not create:
        return None if row is None else int(row[0])
    n = int(con.execute("INSERT INTO bases (base_id) VALUES (?) RETURNING n", (base_id,)).fetchone()[0])
    for sql in _BASE_SCHEMA:
        con.execute(sql.format(n=n))
    return n


def _document_base(con: sqlite3.Connection, doc_id: int) -> tuple[int, str] | None:
    """(the base's number, its id) of a document."""
    row = con.execute("SELECT b.n, b.base_id FROM documents d JOIN bases b ON b.base_id = d.base_id"
                      " WHERE d.id = ?", (doc_id,)).fetchone()
    return None if row is None else (int(row[0]), row[1])


def _chunk_title(title: str, locator: dict) -> str:
    heading = locator.get("heading")
    return f"{title}\n{heading}" if heading else title


def _dumps(locator: dict) -> str:
    return json.dumps(locator, ensure_ascii=False, separators=(",", ":"))


def _where(path: str | None, file_id: str | None) -> dict:
    return {"path": path} if path is not None else {"file_id": file_id}


def _unindex(con: sqlite3.Connection, n: int, ids: list[int]) -> None:
    # An external-content index is told exactly what it was given: the rows' values as indexed.
    con.execute(f"INSERT INTO fts_{n} (fts_{n}, rowid, title, text) SELECT 'delete', id, title, text"
                f" FROM chunks_{n} WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))


def _remove_chunks(con: sqlite3.Connection, n: int, doc_id: int) -> None:
    con.execute(f"INSERT INTO fts_{n} (fts_{n}, rowid, title, text) SELECT 'delete', id, title, text"
                f" FROM chunks_{n} WHERE document_id = ?", (doc_id,))
    con.execute(f"DELETE FROM chunks_{n} WHERE document_id = ?", (doc_id,))
