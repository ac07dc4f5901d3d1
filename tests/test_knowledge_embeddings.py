"""Embeddings for knowledge bases (CONTRACT §8 `settings.knowledge`): the setting's refusals, chunks
embedded in the background through the openai SDK against a real loopback endpoint
(tests/fake_embeddings.py), only what changed embedded again, BM25 alone until a model's
embeddings are complete, an endpoint that fails never holding up indexing or queries, and the
fusion (reciprocal rank, one list across bases) on constructed cases in process."""
from __future__ import annotations

import socket

import numpy as np
import pytest

from backend.features.knowledge import hybrid
from backend.features.knowledge.index_db import KnowledgeIndex
from backend.features.knowledge.types import Chunk
from backend.features.knowledge.vectors import BaseVectors, normalised, to_blob
from tests.fake_embeddings import FakeEmbeddings, embedding
from tests.sandbox_checks import wait_until
from tests.test_api_catalog import assert_invalid
from tests.test_knowledge_api import create, make_folder, query, ready

# Short waits, so a retry or a poll is not what a test spends its time on.
ENV = {"NUMI_KNOWLEDGE_EMBED_RETRY_S": "0.2", "NUMI_KNOWLEDGE_EMBED_POLL_S": "0.1"}
TYPO = "tomattoes watring"  # no word of it is in the index: BM25 finds nothing, the trigrams do


@pytest.fixture
def fe():
    with FakeEmbeddings() as endpoint:
        yield endpoint


@pytest.fixture
def numi(start_server):
    return start_server(ENV).api()


def add_provider(api, base_url: str, kind: str = "openai_compatible", name: str = "Local embeddings") -> str:
    body = {"kind": kind, "name": name, "api_key": "sk-test-not-real", "timeout": 10}
    if base_url:
        body["base_url"] = base_url
    r = api.post("/api/providers", body)
    assert r.status == 201, r
    return r.body["id"]


def use(api, provider_id: str | None, model: str = "fake-embed") -> None:
    value = None if provider_id is None else {"provider_id": provider_id, "model": model}
    r = api.patch("/api/settings", {"knowledge": {"embeddings": value}})
    assert r.status == 200, r
    assert r.body["knowledge"] == {"embeddings": value}


def embeddings_of(api, base_id: str) -> dict | None:
    r = api.get(f"/api/knowledge/{base_id}")
    assert r.status == 200, r
    return r.body["embeddings"]


def embedded(api, base_id: str, model: str = "fake-embed", provider_id: str | None = None, timeout: float = 30) -> dict:
    """The base once every chunk is embedded by `model` (its status polled)."""
    seen: list[dict] = []

    def done():
        seen.append(api.get(f"/api/knowledge/{base_id}").body)
        e = seen[-1]["embeddings"]
        return (e is not None and e["model"] == model and e["status"] == "ready"
                and provider_id in (None, e["provider_id"]))

    wait_until(done, f"the base to be embedded by {model}", timeout=timeout)
    base = seen[-1]
    assert base["embeddings"]["embedded"] == base["chunks"] and base["embeddings"]["error"] is None
    return base


def chunk_inputs(fe: FakeEmbeddings, model: str = "fake-embed") -> list[str]:
    """What the endpoint was asked to embed for chunks (a chunk's input starts with its title line)."""
    return [t for s in fe.requests if s.model == model and len(s.inputs) for t in s.inputs if "\n\n" in t]


# The setting ---------------------------------------------------------------------------------

def test_the_setting_is_off_by_default_and_refuses_what_cannot_embed(numi, fe):
    assert numi.get("/api/settings").body["knowledge"] == {"embeddings": None}
    local = add_provider(numi, fe.base_url)
    claude = add_provider(numi, "", kind="anthropic", name="Claude")
    refusals = [
        ("on", "knowledge", "Must be an object like"),
        ({}, "knowledge.embeddings", "required"),
        ({"embeddings": "nomic-embed-text"}, "knowledge.embeddings", "or null to search by words alone"),
        ({"embeddings": None, "rerank": True}, "knowledge.rerank", "Unknown field"),
        ({"embeddings": {"provider_id": "p_nope", "model": "m"}}, "knowledge.embeddings.provider_id",
         "No provider with the id 'p_nope'"),
        ({"embeddings": {"provider_id": claude, "model": "m"}}, "knowledge.embeddings.provider_id",
         "Claude speaks Anthropic's API"),
        ({"embeddings": {"provider_id": local, "model": "  "}}, "knowledge.embeddings.model", "empty"),
        ({"embeddings": {"provider_id": local}}, "knowledge.embeddings.model", "required"),
        ({"embeddings": {"model": "m"}}, "knowledge.embeddings.provider_id", "required"),
        ({"embeddings": {"provider_id": local, "model": "m", "dimensions": 256}},
         "knowledge.embeddings.dimensions", "Unknown field"),
        ({"embeddings": {"provider_id": 7, "model": "m"}}, "knowledge.embeddings.provider_id", "string"),
    ]
    for value, field, says in refusals:
        assert_invalid(numi.patch("/api/settings", {"knowledge": value}), field, says=says)
        assert numi.get("/api/settings").body["knowledge"] == {"embeddings": None}, value
    r = numi.patch("/api/settings", {"knowledge": {"embeddings": {"provider_id": local, "model": " fake-embed "}}})
    assert r.status == 200, r
    assert r.body["knowledge"] == {"embeddings": {"provider_id": local, "model": "fake-embed"}}
    use(numi, None)
    assert numi.get("/api/settings").body["knowledge"] == {"embeddings": None}


# Background embedding and hybrid queries ------------------------------------------------------

def test_chunks_are_embedded_once_and_queries_then_find_by_meaning(numi, fe, tmp_path):
    folder = tmp_path / "garden"
    files = make_folder(folder)
    base = ready(numi, create(numi, name="Garden", paths=[str(folder)])["id"])
    assert base["embeddings"] is None
    assert query(numi, base["id"], TYPO) == []  # BM25 alone: no word of it is in the base

    use(numi, add_provider(numi, fe.base_url))
    base = embedded(numi, base["id"])
    inputs = chunk_inputs(fe)
    assert len(inputs) == base["chunks"] == len(set(inputs))  # each chunk once
    assert all(s.encoding_format == "base64" and s.authorization == "Bearer sk-test-not-real" for s in fe.requests)
    assert any(t.startswith("Gardening guide\nGardening guide > Tomatoes\n\n") for t in inputs), inputs

    hits = query(numi, base["id"], TYPO)
    assert hits and hits[0]["file"] == files["guide.md"], hits
    assert hits[0]["locator"] == {"heading": "Gardening guide > Tomatoes"}
    assert "full sun" in hits[0]["snippet"]  # found by meaning alone: its snippet is its opening
    assert fe.requests[-1].inputs == [TYPO]  # the query's own embedding: one request
    # A word query still finds by its words first; a fused score is reciprocal-rank (≤ 2/61).
    hit = query(numi, base["id"], "compost humus")[0]
    assert hit["locator"] == {"heading": "Gardening guide > Compost"} and 0 < hit["score"] <= 2 / 61

    # One section changed: only its chunk is embedded again.
    before = len(chunk_inputs(fe))
    (folder / "guide.md").write_text((folder / "guide.md").read_text().replace(
        "A compost heap turns kitchen scraps into humus within months.",
        "A compost heap turns kitchen scraps and autumn leaves into humus within months."))
    r = numi.patch(f"/api/knowledge/{base['id']}", {"paths": [str(folder)]})
    assert r.status == 200, r
    ready(numi, base["id"])
    base = embedded(numi, base["id"])
    new = chunk_inputs(fe)[before:]
    assert len(new) == 1 and "autumn leaves" in new[0], new
    assert query(numi, base["id"], "leafs autum")[0]["locator"] == {"heading": "Gardening guide > Compost"}


def test_a_new_model_embeds_everything_again_and_bm25_answers_until_it_is_done(numi, fe, tmp_path):
    make_folder(tmp_path / "garden")
    provider = add_provider(numi, fe.base_url)
    use(numi, provider)
    base = embedded(numi, ready(numi, create(numi, name="Garden", paths=[str(tmp_path / "garden")])["id"])["id"])
    assert query(numi, base["id"], TYPO)[0]["locator"] == {"heading": "Gardening guide > Tomatoes"}

    fe.hold()
    use(numi, provider, model="fake-embed-2")
    fe.wait_held()
    wait_until(lambda: embeddings_of(numi, base["id"])["model"] == "fake-embed-2", "the new model to be taken up")
    state = embeddings_of(numi, base["id"])
    assert state["status"] == "embedding" and state["error"] is None, state
    asked = len(fe.requests)
    assert query(numi, base["id"], TYPO) == []  # BM25 alone while the new model's embeddings are partial
    assert query(numi, base["id"], "compost humus")[0]["score"] > 2 / 61  # a BM25 score, not a fused one
    assert len(fe.requests) == asked  # and no query was embedded meanwhile

    fe.release()
    base = embedded(numi, base["id"], model="fake-embed-2")
    assert len(chunk_inputs(fe, "fake-embed-2")) == base["chunks"]
    assert query(numi, base["id"], TYPO)[0]["locator"] == {"heading": "Gardening guide > Tomatoes"}
    assert fe.requests[-1].model == "fake-embed-2" and fe.requests[-1].inputs == [TYPO]


def test_a_failing_or_unreachable_endpoint_holds_up_nothing(numi, fe, tmp_path):
    fe.fail(503)
    use(numi, add_provider(numi, fe.base_url))
    make_folder(tmp_path / "garden")
    base = ready(numi, create(numi, name="Garden", paths=[str(tmp_path / "garden")])["id"])
    assert base["documents"] == 4  # indexing finished, whatever the endpoint does
    wait_until(lambda: embeddings_of(numi, base["id"])["status"] == "error", "the failure to show")
    state = embeddings_of(numi, base["id"])
    assert "answered HTTP 503" in state["error"] and state["error"].endswith("."), state
    hit = query(numi, base["id"], "compost humus")[0]  # BM25 answers meanwhile
    assert hit["locator"] == {"heading": "Gardening guide > Compost"} and hit["score"] > 2 / 61
    failed = len(fe.requests)
    fe.wait_requests(failed + 1)  # tried again, later

    fe.fail(None)  # back: the next try embeds everything
    base = embedded(numi, base["id"])
    assert query(numi, base["id"], TYPO)[0]["locator"] == {"heading": "Gardening guide > Tomatoes"}

    # The same model at another address, where nothing listens: the vectors made are kept (they are
    # the model's, wherever it runs), and a query whose embedding fails is answered by BM25 at once.
    asked = len(chunk_inputs(fe))
    gone = add_provider(numi, f"http://127.0.0.1:{free_port()}/v1", name="Gone")
    use(numi, gone)
    embedded(numi, base["id"], provider_id=gone)
    assert len(chunk_inputs(fe)) == asked
    assert query(numi, base["id"], TYPO) == []
    state = embeddings_of(numi, base["id"])
    assert state["status"] == "error" and state["error"].startswith("Gone could not be reached at http://127.0.0.1:")
    assert query(numi, base["id"], "compost humus")[0]["score"] > 2 / 61


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Fusion, in process ---------------------------------------------------------------------------

@pytest.fixture
def index(tmp_path):
    ix = KnowledgeIndex(tmp_path / "knowledge" / "index.db")
    yield ix
    ix.close()


def add(ix: KnowledgeIndex, base: str, path: str, texts: list[str]) -> None:
    doc = ix.upsert_pending(base, path, path.rsplit("/", 1)[-1], path=path)
    ix.replace_document(doc, path.rsplit("/", 1)[-1], [Chunk(t, {"lines": [i + 1, i + 1]}) for i, t in enumerate(texts)],
                        mtime=1.0, size=10)


def embed_all(ix: KnowledgeIndex, base: str) -> BaseVectors:
    """What the embedder does for a base, with the fake's vectors computed here."""
    rows = ix.unembedded(base, "fake-embed", 1000)
    assert ix.store_vectors(base, "fake-embed", [(i, h, to_blob(normalised(embedding(text)))) for i, h, _, text in rows]) \
        == len(rows)
    assert ix.unembedded(base, "fake-embed", 1000) == []
    held = BaseVectors("fake-embed", lambda ids: ix.vectors(base, "fake-embed", ids))
    held.sync(ix.embedded_ids(base, "fake-embed"))
    held.version = ix.version(base)
    return held


def search(ix, held, q, limit=8, bases=("b1", "b2")):
    return hybrid.fused(ix, held, normalised(embedding(q)), list(bases), q, limit)


SHARED = ["Rainwater barrels collect runoff from the roof gutters.",
          "Mulch keeps the soil moist through a dry summer."]


def test_fused_results_are_one_list_across_bases_each_passage_once(index):
    add(index, "b1", "/a/water.md", SHARED + ["Drip irrigation saves water in raised beds."])
    add(index, "b2", "/b/copy-of-water.md", SHARED)  # the same passages in another base
    add(index, "b2", "/b/pests.md", ["Aphids cluster under leaves; ladybirds eat them.",
                                     "Slugs come out after rain water soaks the beds."])
    held = {b: embed_all(index, b) for b in ("b1", "b2")}
    items = search(index, held, "rain water barrel", limit=10)
    texts = [i["text"] for i in items]
    assert len(texts) == len(set(texts)) == 5  # five passages, though seven chunks hold them
    assert SHARED[0] in texts[:2]  # "barrels" by its words, "rainwater" by its trigrams
    assert texts[-1].startswith("Aphids")  # near the query by a few trigrams only: last
    assert all(set(i) == {"title", "file", "snippet", "score", "locator", "document_id", "base_id", "chunk_id",
                          "text"} for i in items)
    assert [i["score"] for i in items] == sorted((i["score"] for i in items), reverse=True)
    assert len(search(index, held, "rain water barrel", limit=2)) == 2  # capped as one list
    # A typo BM25 cannot match is found by the vectors alone, with its opening as its snippet.
    assert index.search(["b1", "b2"], "ladybirdz aphidz") == []
    hit = search(index, held, "ladybirdz aphidz")[0]
    assert hit["text"].startswith("Aphids") and hit["snippet"] == hit["text"]  # short: its opening is all of it


def test_vectors_follow_the_chunks_and_a_change_is_noticed(index):
    add(index, "b1", "/a/water.md", SHARED)
    held = embed_all(index, "b1")
    version = index.version("b1")
    ids = index.embedded_ids("b1", "fake-embed")
    assert held.rows == 2 and held.top(normalised(embedding("mulch soil")), 1)[0][1] == ids[1]
    # The file changes: one chunk goes, one comes; the kept one keeps its vector (not asked for again).
    add(index, "b1", "/a/water.md", [SHARED[0], "Compost feeds the soil all year."])
    assert index.version("b1") > version
    assert [text for _, _, _, text in index.unembedded("b1", "fake-embed", 10)] == ["Compost feeds the soil all year."]
    held = embed_all(index, "b1")
    assert held.rows == 2 and ids[1] not in [cid for _, cid in held.top(normalised(embedding("mulch soil")), 5)]


def test_held_vectors_mask_removed_chunks_and_add_new_ones(index):
    texts = [f"Passage {n} about {word}" for n, word in enumerate(
        ["tomatoes", "compost", "mulch", "aphids", "slugs", "rainwater", "seedlings", "pruning", "roses", "bees"])]
    add(index, "b1", "/a/all.md", texts)
    held = embed_all(index, "b1")
    assert len(held.blocks) == 1
    block = held.blocks[0]
    add(index, "b1", "/a/all.md", texts[:9] + ["Passage 10 about hedgehogs"])  # the last gone, one new
    embed_all(index, "b1")  # stores the new chunk's vector
    held.sync(index.embedded_ids("b1", "fake-embed"))
    # The big block is kept (its removed row masked, 10% dead), the new chunk is a block of its own.
    assert held.blocks[0].rows is block.rows and int(held.blocks[0].alive.sum()) == 9
    assert len(held.blocks) == 2 and held.rows == 10
    found = {cid for _, cid in held.top(normalised(embedding("bees hedgehogs")), 10)}
    gone = set(block.ids.tolist()) - set(index.embedded_ids("b1", "fake-embed"))
    assert gone and not gone & set(found)
    best = held.top(normalised(embedding("hedgehogs")), 1)[0][1]
    assert index.items([("b1", best, 1.0)], "hedgehogs")[0]["text"] == "Passage 10 about hedgehogs"
    # A query vector of another size (another model's) matches nothing.
    assert held.top(np.ones(3, dtype=np.float32), 5) == []


def test_projected_vectors_are_rescored_exactly(index, monkeypatch):
    # Vectors too many to hold whole (here: any) are held projected, 256 dimensions to 128; the
    # first pass's best are scored again in full.
    monkeypatch.setattr("backend.features.knowledge.vectors.HELD_MAX_BYTES", 0)
    words = ["tomatoes", "compost", "mulch", "aphids", "slugs", "rainwater", "seedlings", "pruning", "roses", "bees",
             "hedgehogs", "greenhouse", "trellis", "irrigation", "fertiliser", "weeds", "orchard", "herbs"]
    add(index, "b1", "/a/many.md", [f"{a} and {b} in the {c} bed" for a in words for b in words[:6] for c in words[-3:]])
    held = embed_all(index, "b1")
    monkeypatch.undo()
    assert held.state.basis is not None and held.state.basis.shape == (256, 128) and held.blocks[0].rows.shape[1] == 128
    ids = index.embedded_ids("b1", "fake-embed")
    vectors = dict(index.vectors("b1", "fake-embed", ids))
    whole = BaseVectors("fake-embed", lambda wanted: index.vectors("b1", "fake-embed", wanted))
    whole.sync(ids)
    assert whole.state.basis is None and whole.blocks[0].rows.shape == (324, 256)
    for q in ("rainwater for the roses", "aphids on herbs", "greenhouse seedlings"):
        v = normalised(embedding(q))
        exact = sorted(((float(np.frombuffer(b, "<f4") @ v), cid) for cid, b in vectors.items()), key=lambda s: (-s[0], s[1]))
        best = [round(score, 5) for score, _ in exact[:10]]  # by score: texts of the same words tie
        assert [round(score, 5) for score, _ in held.top(v, 10)] == best  # all 324 rescored
        assert [round(score, 5) for score, _ in whole.top(v, 10)] == best
        # With fewer rescored than the base holds, the first pass decides which are: still the best found.
        monkeypatch.setattr("backend.features.knowledge.vectors.RESCORED", 100)
        assert round(held.top(v, 10)[0][0], 5) == best[0]
        monkeypatch.undo()
