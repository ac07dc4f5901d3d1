"""The knowledge service: reads each base's files in the background, keeps the index, answers queries.

One scanning thread walks a base's folders and files and hands each changed file to the
parse pool (worker processes with time and memory limits); what they read goes into the
index file. A base is `indexing` while a scan of it is queued or running, else `ready`.
Its folders are watched (watch.py): a change there queues a scan of the files that changed
(of the whole base when a folder did), which reads only those whose size or modification time changed.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from backend.features.knowledge import bases, files
from backend.features.knowledge.types import Unreadable
from backend.features.knowledge.watch import FolderWatch
from backend.store.db import short_connection
from backend.store.serialize import files_by_id, iso
from backend.turns.features import AppContext, Embeddings, FeatureService

if TYPE_CHECKING:
    from backend.features.knowledge.embeddings import Embedder
    from backend.features.knowledge.index_db import KnowledgeIndex
    from backend.features.knowledge.parse_pool import ParsePool

log = logging.getLogger(__name__)

PARSE_WORKERS = 2
PARSE_TIMEOUT_S = 60.0
PARSE_MEMORY_MB = 1024


@dataclass
class Progress:
    """A scan in progress: documents done of total, and the file being read."""
    done: int = 0
    total: int = 0
    current: str | None = None
    queued: int = 0  # scans of the base waiting or running
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Source:
    """One file of a base as the scan found it."""
    key: str  # the absolute path, or "file:<id>" for an uploaded file
    read_path: str
    name: str
    size: int
    mtime: float | None
    path: str | None = None
    file_id: str | None = None


class KnowledgeService(FeatureService):
    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.index: KnowledgeIndex = None  # type: ignore[assignment]  # opened by start()
        self.pool: ParsePool | None = None
        self.embedder: Embedder | None = None  # embeds chunks when settings.knowledge.embeddings is set
        self.watch: FolderWatch | None = None
        self._jobs: queue.Queue[tuple[str, list[str] | None] | None] = queue.Queue()
        self._progress: dict[str, Progress] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def provides(self) -> dict:
        """"embeddings": its embedder, which embeds other features' texts too (memory's)."""
        if self.embedder is None:
            return {}
        embeddings: Embeddings = self.embedder  # mypy checks it keeps the promised shape
        return {"embeddings": embeddings}

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        from backend.features.knowledge.embeddings import Embedder  # numpy: loaded when the service starts
        from backend.features.knowledge.index_db import KnowledgeIndex
        from backend.features.knowledge.parse_pool import ParsePool

        self.index = KnowledgeIndex(self.ctx.data_dir / "knowledge" / "index.db")
        self.embedder = Embedder(self.index, self.ctx.keys)
        self.embedder.start()
        self.pool = ParsePool(workers=PARSE_WORKERS, timeout_s=PARSE_TIMEOUT_S, memory_mb=PARSE_MEMORY_MB)
        self._thread = threading.Thread(target=self._run, name="knowledge-index", daemon=True)
        self._thread.start()
        self.watch = FolderWatch(self.submit)
        self.watch.start()
        # Files may have changed while Numi was closed: every base is looked over once.
        with short_connection():
            for base in bases.all_bases():
                self.changed(base)

    def stop(self, timeout: float) -> None:
        self._stopping.set()
        if self.watch is not None:
            self.watch.stop(timeout)
        self._jobs.put(None)
        if self.pool is not None:
            self.pool.close()  # a file being read ends now; the next start reads it again
        if self._thread is not None:
            self._thread.join(timeout)
        if self.embedder is not None:
            self.embedder.stop(timeout)
        if self.index is not None:
            self.index.close()

    # --- what the routes ask ----------------------------------------------------------------

    def submit(self, base_id: str, paths: list[str] | None = None) -> None:
        """Look the base's files over again (in the background): those at `paths` (the watch names the files
        that changed), or all of them."""
        with self._lock:
            progress = self._progress.setdefault(base_id, Progress())
        with progress.lock:
            progress.queued += 1
        self._jobs.put((base_id, paths))

    def changed(self, base: bases.Base) -> None:
        """The base is new or its folders and files changed: watch them, and read what changed."""
        if self.watch is not None:
            self.watch.watch(base.id, base.paths)
        self.submit(base.id)

    def forget(self, base_id: str) -> None:
        """The base was deleted: stop watching it and drop its index."""
        if self.watch is not None:
            self.watch.unwatch(base_id)
        self.index.remove_base(base_id)

    def search(self, base_ids: list[str], q: str, limit: int) -> list[dict]:
        """The best chunks of the bases for a query, best first, each passage once, at most `limit`:
        BM25, fused with the embeddings when every base is embedded (hybrid.py)."""
        from backend.features.knowledge import hybrid

        return hybrid.search(self.index, self.embedder, base_ids, q, limit)

    def to_dict(self, base: bases.Base) -> dict:
        documents, chunks = self.index.counts(base.id)
        progress = self._progress.get(base.id)
        busy = progress is not None and progress.queued > 0
        out = {"id": base.id, "name": base.name, "paths": base.paths, "file_ids": base.file_ids,
               "status": "indexing" if busy else "ready", "documents": documents, "chunks": chunks,
               "updated_at": iso(base.updated_at), "problems": self.index.problems(base.id),
               "embeddings": self.embedder.status(base.id) if self.embedder is not None else None}
        if busy and progress is not None:
            out["progress"] = {"done": progress.done, "total": progress.total, "current": progress.current}
        return out

    # --- the scanning thread ----------------------------------------------------------------

    def _run(self) -> None:
        with ThreadPoolExecutor(PARSE_WORKERS, thread_name_prefix="knowledge-read") as readers:
            while not self._stopping.is_set():
                job = self._jobs.get()
                if job is None:
                    return
                base_id, paths = job
                progress = self._progress[base_id]
                try:
                    gone: list[str] | None = None
                    with short_connection():
                        base = bases.get(base_id)
                        if base is None:
                            sources = None
                        elif paths is None:
                            sources = self._sources(base)
                        else:
                            sources, gone = self._changed_sources(base, paths)
                    if sources is not None:
                        self._scan(base_id, sources, progress, readers, gone)
                        if self.embedder is not None:
                            self.embedder.wake()  # what was read is embedded now, not at the next poll
                except Exception:
                    log.exception("knowledge: reading base %s failed", base_id)
                finally:
                    with progress.lock:
                        progress.queued -= 1
                        progress.current = None

    def _sources(self, base: bases.Base) -> list[Source]:
        found = [Source(f.path, f.path, os.path.basename(f.path), f.size, f.mtime, path=f.path) for f in files.walk(base.paths)]
        for row in files_by_id(base.file_ids).values():
            found.append(Source(f"file:{row.id}", str(self.ctx.files.path(row.sha256)), row.name, row.size, None,
                                file_id=row.id))
        return found

    def _changed_sources(self, base: bases.Base, paths: list[str]) -> tuple[list[Source], list[str]]:
        """The base's files among `paths` that are there to read, and the keys of those no longer its files."""
        found, gone = [], []
        for path in paths:
            f = files.find(base.paths, path)
            if f is None:
                gone.append(path)
            else:
                found.append(Source(f.path, f.path, os.path.basename(f.path), f.size, f.mtime, path=f.path))
        return found, gone

    def _scan(self, base_id: str, sources: list[Source], progress: Progress, readers,
              gone: list[str] | None = None) -> None:
        """Read what changed among `sources`; drop the documents of `gone` (None: of every file not in `sources`)."""
        index = self.index
        if gone is None:
            keep = {s.key for s in sources}
            for doc in index.documents(base_id):
                key = doc.get("path") or f"file:{doc.get('file_id')}"
                if key not in keep:
                    index.remove_document(doc["id"])
        else:
            for key in gone:
                known = index.document_by_key(base_id, key)
                if known is not None:
                    index.remove_document(known["id"])
        todo = []
        for source in sources:
            known = index.document_by_key(base_id, source.key)
            if known and known["status"] != "pending" and known["mtime"] == source.mtime \
                    and known["size"] == source.size:
                continue
            todo.append(source)
        with progress.lock:
            progress.done, progress.total = 0, len(todo)
        log.info("knowledge: base %s looked over: %d of %d files to read", base_id, len(todo), len(sources))
        # Reads run PARSE_WORKERS at a time, a few queued ahead; their results are written here,
        # one file at a time, in the order the scan found them.
        pending = iter([(s, index.upsert_pending(base_id, s.key, s.name, path=s.path, file_id=s.file_id))
                        for s in todo])
        window: deque = deque()

        def fill() -> None:
            while len(window) < 2 * PARSE_WORKERS and (item := next(pending, None)) is not None:
                window.append((*item, readers.submit(self._read, item[0], progress)))

        fill()
        while window and not self._stopping.is_set():
            source, doc_id, future = window.popleft()
            try:
                parsed = future.result()
            except Unreadable as exc:
                index.mark_unreadable(doc_id, exc.reason)
            else:
                index.replace_document(doc_id, parsed.title, parsed.chunks, source.mtime, source.size)
            with progress.lock:
                progress.done += 1
            fill()

    def _read(self, source: Source, progress: Progress):
        most = files.max_file_bytes()
        if source.size > most:
            raise Unreadable(f"It is {files.size_text(source.size)}; Numi reads files of at most "
                             f"{files.size_text(most)}.")
        with progress.lock:
            progress.current = source.path or source.name
        assert self.pool is not None
        return self.pool.read(source.read_path, source.name)
