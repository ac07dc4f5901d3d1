"""Retrieval quality: recall@5 of a knowledge base on labelled questions about real documentation.

The corpus (tests/fixtures/knowledge_docs/corpus/, sources and licences in its README) is read by
the real readers and chunker into a real KnowledgeIndex, as the knowledge service does. Each
question in questions.json was written by a person from the sections that answer it, and names
its document and the heading path(s) of those sections.

A question is answered (a hit) when one of the first 5 results is from its document and sits at
or under one of its labelled headings: the labelled path equals the result's heading path or is
a prefix of it ending at a " > " boundary ("A > B" holds "A > B > C", not "A > Bc").

`recall_at_5` takes any `search(q, limit) -> items` (items as in CONTRACT §8: "file" and
"locator"), so the same questions can measure another search — hybrid through the service with
an embeddings endpoint — against the same corpus.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.features.knowledge.index_db import KnowledgeIndex
from backend.features.knowledge.readers import read_file

HERE = Path(__file__).parent / "fixtures" / "knowledge_docs"
CORPUS = HERE / "corpus"
QUESTIONS = HERE / "questions.json"
BASE = "recall"
K = 5
BM25_TARGET = 0.8  # issue 35: recall@5 ≥ 0.8 with BM25 alone

Search = Callable[[str, int], list[dict]]


def load_questions() -> list[dict]:
    """The labelled questions: {"q", "doc" (a file name in corpus/), "headings" (heading paths)}."""
    return json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]


def within(heading: str, section: str) -> bool:
    """Whether the heading path `heading` is the section `section` or lies inside it."""
    return heading == section or heading.startswith(section + " > ")


def is_hit(item: dict, question: dict) -> bool:
    """Whether a search result is from the question's document, at or under one of its headings."""
    file = item.get("file") or item.get("path") or ""
    heading = (item.get("locator") or {}).get("heading")
    return (os.path.basename(str(file)) == question["doc"] and heading is not None
            and any(within(heading, section) for section in question["headings"]))


def recall_at_5(search: Search, questions: list[dict] | None = None) -> tuple[float, list[dict]]:
    """The share of questions with a hit in the first 5 results, and the misses
    ({"q", "doc", "headings", "got": [(file name, heading) of what came back]})."""
    questions = load_questions() if questions is None else questions
    misses = []
    for question in questions:
        items = search(question["q"], K)[:K]
        if not any(is_hit(item, question) for item in items):
            got = [(os.path.basename(str(i.get("file") or i.get("path") or "")), (i.get("locator") or {}).get("heading"))
                   for i in items]
            misses.append({**question, "got": got})
    return (len(questions) - len(misses)) / len(questions), misses


def report(name: str, score: float, misses: list[dict]) -> str:
    """The figure and each miss, for the test's output."""
    lines = [f"{name}: recall@{K} = {score:.3f} ({len(misses)} missed)"]
    for miss in misses:
        lines.append(f"  MISS {miss['q']!r} → {miss['doc']}: {' | '.join(miss['headings'])}")
        lines.extend(f"       got {file}: {heading}" for file, heading in miss["got"])
    return "\n".join(lines)


def index_corpus(index: KnowledgeIndex, base_id: str = BASE) -> int:
    """Every corpus file read by the real readers into the index, as the service writes it; the chunk count."""
    total = 0
    for path in sorted(CORPUS.iterdir()):
        stat = path.stat()
        doc_id = index.upsert_pending(base_id, str(path), path.name, path=str(path))
        parsed = read_file(str(path))
        index.replace_document(doc_id, parsed.title, parsed.chunks, stat.st_mtime, stat.st_size)
        total += len(parsed.chunks)
    return total


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory):
    index = KnowledgeIndex(tmp_path_factory.mktemp("recall") / "knowledge" / "index.db")
    index_corpus(index)
    yield index
    index.close()


def test_the_labels_name_sections_the_reader_finds(corpus_index):
    """Every labelled heading is one the index holds: a label that names nothing could never be hit."""
    questions = load_questions()
    assert len(questions) >= 40
    found: dict[str, set[str]] = {}
    for doc in corpus_index.documents(BASE):
        assert doc["status"] == "indexed", doc
        found[os.path.basename(doc["path"])] = set()
    for item in _all_chunks(corpus_index):
        found[os.path.basename(item["file"])].add(item["locator"]["heading"])
    for question in questions:
        assert question["doc"] in found, question
        for section in question["headings"]:
            assert section in found[question["doc"]], (question["q"], section)


def test_the_matching_rule():
    question = {"q": "x", "doc": "node-os.md", "headings": ["OS > `os.cpus()`", "A > B"]}
    hit = {"file": "/any/where/node-os.md", "locator": {"heading": "OS > `os.cpus()`"}}
    assert is_hit(hit, question)
    assert is_hit({"file": "node-os.md", "locator": {"heading": "A > B > C"}}, question)  # inside the section
    assert not is_hit({"file": "node-os.md", "locator": {"heading": "A > Bc"}}, question)  # a sibling, not inside
    assert not is_hit({"file": "node-os.md", "locator": {"heading": "A"}}, question)  # the section's parent
    assert not is_hit({"file": "node-path.md", "locator": {"heading": "A > B"}}, question)  # another document
    assert not is_hit({"file": "node-os.md", "locator": {"lines": [1, 9]}}, question)
    assert recall_at_5(lambda q, limit: [hit], [question]) == (1.0, [])
    score, misses = recall_at_5(lambda q, limit: [], [question, question])
    assert score == 0.0 and [m["got"] for m in misses] == [[], []]


def test_bm25_recall_at_5(corpus_index):
    score, misses = recall_at_5(lambda q, limit: corpus_index.search([BASE], q, limit))
    print("\n" + report("BM25", score, misses))
    assert score >= BM25_TARGET, report("BM25", score, misses)


def _all_chunks(index: KnowledgeIndex) -> list[dict]:
    """Every chunk of the base, as {"file", "locator"}, read the way the viewer's route does."""
    out = []
    for doc in index.documents(BASE):
        read = index.document(BASE, doc["id"])
        assert read is not None
        out.extend({"file": read["path"], "locator": chunk["locator"]} for chunk in read["chunks"])
    return out


def test_hybrid_recall_at_5_beats_bm25_through_the_server(start_server, tmp_path):
    """The same questions through `POST …/query` of a real server whose base is embedded by a loopback
    endpoint speaking OpenAI's /v1/embeddings (tests/fake_embeddings.py: hashed character trigrams,
    which match misspelt and inflected words BM25 cannot)."""
    from tests.fake_embeddings import FakeEmbeddings
    from tests.test_knowledge_api import create, ready
    from tests.test_knowledge_embeddings import ENV, add_provider, embedded, use

    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.iterdir())]
    with FakeEmbeddings(fitted_on=texts) as endpoint:
        api = start_server(ENV).api()
        base = create(api, name="Docs", paths=[str(CORPUS)])
        ready(api, base["id"])

        def search(q: str, limit: int) -> list[dict]:
            r = api.post(f"/api/knowledge/{base['id']}/query", {"q": q, "limit": limit})
            assert r.status == 200, r
            return r.body["items"]

        words, word_misses = recall_at_5(search)
        use(api, add_provider(api, endpoint.base_url))
        embedded(api, base["id"], timeout=60)
        both, misses = recall_at_5(search)
    print("\n" + report("BM25 via the server", words, word_misses) + "\n" + report("hybrid", both, misses))
    assert words >= BM25_TARGET
    assert both > words, report("hybrid", both, misses)
