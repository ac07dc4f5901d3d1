"""The knowledge bases' index (backend/features/knowledge/index_db.py) and its query cleaning
(fts_query.py): real SQLite in a temp dir, in process."""
from __future__ import annotations

import os
import sqlite3
import stat
import threading

import pytest

from backend.features.knowledge import index_db
from backend.features.knowledge.fts_query import MAX_TERMS, STOP_WORDS, clean_query, terms
from backend.features.knowledge.index_db import KnowledgeIndex
from backend.features.knowledge.types import Chunk

ITEM_KEYS = {"title", "file", "snippet", "score", "locator", "document_id", "base_id", "chunk_id", "text"}


@pytest.fixture
def index(tmp_path):
    ix = KnowledgeIndex(tmp_path / "knowledge" / "index.db")
    yield ix
    ix.close()


def add(ix: KnowledgeIndex, base: str, path: str, title: str, texts: list[str], heading: str | None = None) -> int:
    """A document of plain passages (line locators, or one heading for all), indexed."""
    doc = ix.upsert_pending(base, path, path.rsplit("/", 1)[-1], path=path)
    chunks = [Chunk(t, {"heading": heading} if heading is not None else {"lines": [i * 10 + 1, i * 10 + 10]})
              for i, t in enumerate(texts)]
    ix.replace_document(doc, title, chunks, mtime=1_700_000_000.0, size=100 * len(texts))
    return doc


def chunk_rows(ix: KnowledgeIndex, base: str) -> dict[str, tuple[int, bytes | None]]:
    """text → (chunk id, vector) of a base's chunks, read straight from the file."""
    con = sqlite3.connect(ix.path)
    try:
        n = con.execute("SELECT n FROM bases WHERE base_id = ?", (base,)).fetchone()[0]
        return {text: (cid, vec) for cid, text, vec in con.execute(f"SELECT id, text, vector FROM chunks_{n}")}
    finally:
        con.close()


# Query cleaning ---------------------------------------------------------------------------

def test_clean_query_quotes_terms_drops_stop_words_and_duplicates():
    assert clean_query("How do I configure the Kubernetes ingress?") == '"configure" OR "kubernetes" OR "ingress"'
    # Case and accents folded before duplicates are dropped; one-letter leftovers of "it's" go too.
    assert terms("Café cafe CAFÉ it's café's") == ["cafe"]
    assert clean_query("what is the") is None
    assert clean_query("") is None and clean_query("  ?!  🙂 ") is None
    assert {"the", "and", "or", "not", "what", "how"} <= STOP_WORDS


def test_clean_query_keeps_the_rarer_looking_terms_in_written_order():
    q = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu extraordinarily HTTP2 configuration"
    kept = terms(q)
    assert len(kept) == MAX_TERMS
    assert {"extraordinarily", "configuration", "http2", "epsilon"} <= set(kept)
    assert "mu" not in kept and "eta" not in kept
    assert kept == [w for w in q.lower().split() if w in kept]  # as written
    assert len(terms(" ".join(f"word{i}" for i in range(100)), max_terms=3)) == 3


@pytest.mark.parametrize("hostile", [
    '"', '""', '"unbalanced', "*", "kube*", "NEAR(kubernetes ingress, 2)", "NEAR(", "title:", "text: ingress",
    "{title text}: x", "-x", "- kubernetes", "AND OR NOT", "kubernetes AND", "OR", "((kubernetes", "kubernetes))",
    "^kubernetes", "+", "🙂🚀", "a:b:c", "\x00kubernetes\x00", "'; DROP TABLE documents; --", "x" * 10_000,
    ("kubernetes " * 2_000)[:10_000],
])
def test_hostile_query_text_is_only_text(index, hostile):
    add(index, "b", "/d/k8s.md", "Cluster notes", ["Kubernetes ingress controllers route traffic."])
    match = clean_query(hostile)
    assert match is None or all(part.startswith('"') and part.endswith('"') for part in match.split(" OR "))
    index.search(["b"], hostile)  # never raises
    # Beside a real word, the hostile text changes nothing: the word is found.
    found = index.search(["b"], f"{hostile} ingress")
    assert [i["text"] for i in found] == ["Kubernetes ingress controllers route traffic."]


# Matching ---------------------------------------------------------------------------------

def test_stemming_and_diacritics(index):
    add(index, "b", "/d/a.txt", "Notes", ["The dog runs every morning.", "We met at the café in Zürich.",
                                          "Nothing to see here."])
    assert [i["text"] for i in index.search(["b"], "running")] == ["The dog runs every morning."]
    assert [i["text"] for i in index.search(["b"], "which cafe in zurich?")] == ["We met at the café in Zürich."]
    assert [i["text"] for i in index.search(["b"], "CAFÉ")] == ["We met at the café in Zürich."]


def test_stop_word_only_and_empty_queries_find_nothing(index):
    add(index, "b", "/d/a.txt", "The", ["What is the best way to do it? It is what it is."])
    assert index.search(["b"], "what is the") == []
    assert index.search(["b"], "How do I do it?") == []
    assert index.search(["b"], "") == []
    assert index.search([], "best way") == [] and index.search(["nope"], "best way") == []


def test_the_chunk_matching_more_terms_comes_first(index):
    add(index, "b", "/d/a.txt", "Guide", [
        "Ingress routes traffic into the cluster for services.",
        "A ingress controller needs a certificate and a cluster issuer to terminate tls.",
        "Certificates expire; renew them before they do, for services.",
    ])
    found = index.search(["b"], "How do I set up an ingress certificate for TLS?")
    assert found[0]["text"].startswith("A ingress controller needs a certificate")
    assert len(found) == 3
    scores = [i["score"] for i in found]
    assert scores == sorted(scores, reverse=True)


def test_a_title_hit_outranks_a_body_hit(index):
    # The same number of tokens in each row, one hit each: only the column differs.
    add(index, "b", "/d/body.txt", "Other handbook", ["zebra crossings two three four"])
    add(index, "b", "/d/title.txt", "Zebra handbook", ["pedestrian crossings two three four"])
    found = index.search(["b"], "zebra")
    assert [i["file"] for i in found] == ["/d/title.txt", "/d/body.txt"]
    assert found[0]["score"] > found[1]["score"]
    # Headings count as title too.
    add(index, "h", "/d/h1.md", "Doc", ["walrus habitats two three"], heading="")
    add(index, "h", "/d/h2.md", "Doc", ["seal habitats two three"], heading="Walrus")
    assert [i["file"] for i in index.search(["h"], "walrus")] == ["/d/h2.md", "/d/h1.md"]


def test_search_item_shape_snippet_and_limit(index):
    long = " ".join(f"filler{i}" for i in range(200)) + " the <b>needle</b> is here " + \
        " ".join(f"tail{i}" for i in range(200))
    doc = add(index, "b", "/d/long.md", "Long one", [long], heading="Part > Section")
    [item] = index.search(["b"], "needle")
    assert set(item) == ITEM_KEYS
    assert item["title"] == "Long one" and item["file"] == "/d/long.md" and item["document_id"] == doc
    assert item["locator"] == {"heading": "Part > Section"} and item["base_id"] == "b" and item["text"] == long
    assert isinstance(item["score"], float) and item["score"] > 0
    # A short plain-text excerpt around the hit: the file's own text, no markup added.
    assert "needle" in item["snippet"] and len(item["snippet"]) < 400 and item["snippet"].startswith("…")
    assert item["snippet"].replace("…", "") in long
    for n in range(60):
        add(index, "many", f"/d/{n:02d}.txt", f"T{n}", [f"common word {n}"])
    assert len(index.search(["many"], "common", limit=1000)) == index_db.MAX_LIMIT
    assert len(index.search(["many"], "common", limit=3)) == 3
    assert index.search(["many"], "common", limit=0) == []


def test_uploaded_files_are_named_by_file_id(index):
    doc = index.upsert_pending("b", "file:f_123", "report.pdf", file_id="f_123")
    index.replace_document(doc, "Annual report", [Chunk("Revenue grew.", {"page": "iv", "page_index": 3})], None, None)
    [item] = index.search(["b"], "revenue")
    assert item["file"] == "f_123" and item["locator"] == {"page": "iv", "page_index": 3}
    assert index.documents("b") == [{"id": doc, "file_id": "f_123", "title": "Annual report", "status": "indexed",
                                     "chunks": 1}]


# Dedup ------------------------------------------------------------------------------------

def test_the_same_file_in_two_bases_is_found_once(index):
    texts = ["Backups run nightly at two.", "Restores need the backup key."]
    add(index, "b1", "/shared/ops.md", "Ops", texts)
    add(index, "b2", "/shared/ops.md", "Ops", texts)
    add(index, "b2", "/shared/copy-of-ops.md", "Ops", texts)  # a copy: the same passages
    add(index, "b2", "/shared/other.md", "Other", ["A backup of the backup is kept offsite."])
    found = index.search(["b1", "b2"], "backup restores")
    assert sorted(i["text"] for i in found) == sorted(texts + ["A backup of the backup is kept offsite."])
    assert len({(i["text"], str(i["locator"])) for i in found}) == len(found)
    assert len(index.search(["b1"], "backup restores")) == 2
    assert len(index.search(["b1", "b1", "b2"], "backup restores", limit=2)) == 2


# Re-indexing ------------------------------------------------------------------------------

def test_replace_document_keeps_unchanged_chunks(index):
    doc = add(index, "b", "/d/a.md", "Doc", ["alpha one", "bravo two", "charlie three"], heading="H")
    before = chunk_rows(index, "b")
    # An embedding stored on a chunk (a later change) must survive a re-index that keeps it.
    con = sqlite3.connect(index.path)
    with con:
        con.execute("UPDATE chunks_1 SET vector = x'0102', model = 'm' WHERE text = 'alpha one'")
    con.close()
    new = [Chunk(t, {"heading": "H"}) for t in ["alpha one", "bravo TWO changed", "charlie three", "delta four"]]
    index.replace_document(doc, "Doc", new, mtime=2.0, size=200)
    after = chunk_rows(index, "b")
    assert after["alpha one"] == (before["alpha one"][0], b"\x01\x02")
    assert after["charlie three"][0] == before["charlie three"][0]
    assert "bravo two" not in after and set(after) == {"alpha one", "bravo TWO changed", "charlie three", "delta four"}
    assert after["bravo TWO changed"][0] not in {cid for cid, _ in before.values()}
    assert after["delta four"][0] not in {cid for cid, _ in before.values()}
    assert index.search(["b"], "changed")[0]["text"] == "bravo TWO changed"
    assert index.search(["b"], "delta")[0]["text"] == "delta four"
    assert [c["text"] for c in index.document("b", doc)["chunks"]] == [c.text for c in new]
    assert index.document_by_key("b", "/d/a.md") == {"id": doc, "mtime": 2.0, "size": 200, "status": "indexed"}
    # A changed last chunk gets a new id too: ids are never reused.
    last = chunk_rows(index, "b")["delta four"][0]
    index.replace_document(doc, "Doc", new[:3] + [Chunk("delta five", {"heading": "H"})], mtime=2.5, size=200)
    assert chunk_rows(index, "b")["delta five"][0] > last
    # A new title re-indexes the title column of kept chunks, still keeping their rows.
    index.replace_document(doc, "Renamed manual", new[:1], mtime=3.0, size=10)
    assert chunk_rows(index, "b") == {"alpha one": (before["alpha one"][0], b"\x01\x02")}
    assert [i["text"] for i in index.search(["b"], "manual")] == ["alpha one"]
    assert index.search(["b"], "charlie") == [] and index.search(["b"], "doc") == []
    assert index.counts("b") == (1, 1)


def test_pending_unreadable_and_removed_documents(index):
    ok = add(index, "b", "/d/ok.md", "Fine", ["readable text here"])
    pending = index.upsert_pending("b", "/d/new.md", "new.md", path="/d/new.md")
    bad = add(index, "b", "/d/bad.pdf", "Bad", ["was readable once"])
    index.mark_unreadable(bad, "The PDF is encrypted.")
    assert index.upsert_pending("b", "/d/new.md", "new.md", path="/d/new.md") == pending  # the same document
    assert index.documents("b") == [
        {"id": bad, "path": "/d/bad.pdf", "title": "Bad", "status": "unreadable", "reason": "The PDF is encrypted.",
         "chunks": 0},
        {"id": pending, "path": "/d/new.md", "title": "new.md", "status": "pending", "chunks": 0},
        {"id": ok, "path": "/d/ok.md", "title": "Fine", "status": "indexed", "chunks": 1},
    ]
    assert index.problems("b") == [{"path": "/d/bad.pdf", "reason": "The PDF is encrypted."}]
    assert index.counts("b") == (1, 1)
    assert index.search(["b"], "readable once") and all(i["document_id"] == ok
                                                         for i in index.search(["b"], "readable once"))
    assert index.document("b", ok) == {"id": ok, "title": "Fine", "path": "/d/ok.md",
                                       "chunks": [{"locator": {"lines": [1, 10]}, "text": "readable text here"}]}
    assert index.document("other", ok) is None and index.document("b", 999) is None
    assert index.document_by_key("b", "/d/none.md") is None
    assert index.document_by_key("b", "/d/new.md")["status"] == "pending"
    # Re-read, an indexed document is pending again but still found until replaced.
    index.upsert_pending("b", "/d/ok.md", "ok.md", path="/d/ok.md")
    assert index.document_by_key("b", "/d/ok.md")["status"] == "pending"
    assert index.search(["b"], "readable text")[0]["title"] == "Fine"
    index.remove_document(ok)
    assert index.search(["b"], "readable text") == [] and index.document("b", ok) is None
    assert index.counts("b") == (0, 0)
    index.replace_document(ok, "Gone", [Chunk("ghost", {"lines": [1, 1]})], None, None)  # removed meanwhile
    assert index.search(["b"], "ghost") == []


def test_remove_base_leaves_nothing_of_it(index):
    add(index, "gone", "/d/a.md", "A", [f"shared words {i}" for i in range(50)])
    add(index, "kept", "/d/a.md", "A", ["shared words kept"])
    index.remove_base("gone")
    assert index.search(["gone"], "shared words") == []
    assert index.documents("gone") == [] and index.counts("gone") == (0, 0) and index.problems("gone") == []
    assert [i["text"] for i in index.search(["gone", "kept"], "shared")] == ["shared words kept"]
    con = sqlite3.connect(index.path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert con.execute("SELECT count(*) FROM documents WHERE base_id = 'gone'").fetchone()[0] == 0
    assert con.execute("SELECT base_id FROM bases").fetchall() == [("kept",)]
    con.close()
    assert {"chunks_1", "fts_1"}.isdisjoint(tables) and {"chunks_2", "fts_2"} <= tables
    index.remove_base("never-was")
    # A base added again starts empty, in new tables.
    add(index, "gone", "/d/b.md", "B", ["fresh start"])
    assert [i["text"] for i in index.search(["gone"], "shared fresh")] == ["fresh start"]


def test_bounded_weighing_still_ranks_rare_and_common_words(index, monkeypatch):
    # A budget of 4 chunks: "common" is in too many to weigh, "rare" is not.
    monkeypatch.setattr(index_db, "BUDGET", 4)
    add(index, "b", "/d/a.txt", "Doc", [f"common filler {i}" for i in range(20)] + [
        f"other padding {i}" for i in range(40)] + ["rare alone here now", "rare and common together"])
    found = index.search(["b"], "rare common")
    assert [i["text"] for i in found[:2]] == ["rare and common together", "rare alone here now"]
    # Then chunks holding only the common word, weighed among its newest matches.
    assert len(found) > 2 and all(i["text"].startswith("common filler") for i in found[2:])
    assert len(index.search(["b"], "common filler", limit=50)) >= 4  # only common words: still found
    assert index.search(["b"], "common together")[0]["text"] == "rare and common together"


# The file ---------------------------------------------------------------------------------

@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_index_file_is_private(tmp_path):
    old = os.umask(0o022)
    try:
        ix = KnowledgeIndex(tmp_path / "data" / "knowledge" / "index.db")
        add(ix, "b", "/d/a.md", "A", ["text"])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "data" / "knowledge").stat().st_mode) == 0o700
    assert stat.S_IMODE(ix.path.stat().st_mode) == 0o600
    ix.close()
    with pytest.raises(sqlite3.ProgrammingError):
        ix.search(["b"], "text")


@pytest.mark.parametrize("damage", ["newer", "garbage"])
def test_an_unknown_or_damaged_file_is_rebuilt_empty(tmp_path, damage):
    path = tmp_path / "knowledge" / "index.db"
    ix = KnowledgeIndex(path)
    add(ix, "b", "/d/a.md", "A", ["text"])
    ix.close()
    if damage == "newer":
        con = sqlite3.connect(path)
        con.execute("PRAGMA user_version = 99")
        con.close()
    else:
        for name in ("index.db-wal", "index.db-shm"):
            (path.parent / name).unlink(missing_ok=True)
        path.write_bytes(b"not a database at all" * 100)
    ix = KnowledgeIndex(path)
    try:
        assert ix.documents("b") == [] and ix.search(["b"], "text") == []
        add(ix, "b", "/d/a.md", "A", ["text again"])
        assert [i["text"] for i in ix.search(["b"], "text")] == ["text again"]
    finally:
        ix.close()
    reopened = KnowledgeIndex(path)  # the current version is kept as it is
    assert [d["title"] for d in reopened.documents("b")] == ["A"]
    reopened.close()


# Threads ----------------------------------------------------------------------------------

def test_reads_during_a_writers_writes_never_see_database_is_locked(index):
    add(index, "b", "/d/seed.md", "Seed", ["seed passage about kernels"])
    add(index, "gone", "/d/x.md", "X", ["kernels to be removed"])
    errors: list[BaseException] = []
    done = threading.Event()
    reads = [0]

    def writer():
        try:
            for n in range(150):
                add(index, "b", f"/d/{n:03d}.md", f"Doc {n}", [f"kernels passage {n} {w}" for w in range(5)])
                if n % 10 == 0:
                    index.mark_unreadable(index.upsert_pending("b", f"/d/bad{n}.pdf", "bad"), "Encrypted.")
                if n == 75:
                    index.remove_base("gone")
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def other_writer():  # a request's writes beside the indexer's queue, never fail
        try:
            for n in range(50):
                add(index, "c", f"/c/{n:03d}.md", f"C {n}", [f"kernels elsewhere {n}"])
        except BaseException as exc:
            errors.append(exc)

    def reader():
        try:
            while not done.is_set():
                assert index.search(["b", "gone"], "kernels passage")
                index.documents("b")
                index.counts("b")
                index.problems("b")
                reads[0] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=other_writer)] + [
        threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert reads[0] > 0
    assert index.counts("b") == (151, 1 + 150 * 5) and index.counts("c") == (50, 50)
