"""Memories chosen by embeddings as well as full text (CONTRACT §8, issue 36) through the real server,
the fake provider and a real loopback embeddings endpoint (tests/fake_embeddings.py): beyond the
budget, a memory that shares no word with the latest message but is near it in meaning is carried
while embeddings are on (Settings → Knowledge) and not while off, not before every memory has a
vector by the current model (a new model embeds them all again), and not when the message's own
embedding fails or hangs: the request then goes at once by full text; an edited memory is embedded
again, a deleted one's vector goes with it, and forgetting everything leaves no vector."""
from __future__ import annotations

import sqlite3
import time

import numpy as np
import pytest

from backend.features.memory.embedder import BATCH, QUERY_TIMEOUT_S
from tests.fake_embeddings import FakeEmbeddings, embedding
from tests.fakeprovider import script as S
from tests.sandbox_checks import wait_until
from tests.test_knowledge_embeddings import add_provider, use
from tests.test_protocol_memory import add, carried, memories
from tests.test_protocol_modes import system_text, turn

# Short polls, so a poll is not what a test spends its time on.
ENV = {"NUMI_KNOWLEDGE_EMBED_POLL_S": "0.1", "NUMI_KNOWLEDGE_EMBED_RETRY_S": "0.2", "NUMI_MEMORY_EMBED_POLL_S": "0.1"}

# Near "bees" by the fake's character trigrams (beeswax, beehives), yet no word in common: full
# text never finds it. The oldest memory, and longer than any filler, so the newest never reach
# it, nor does it fit the room they leave.
NEAR = "Sells beeswax candles and honeycomb from the beehives behind the cottage."
QUESTION = "How are my bees?"
SPRING = "Keeps a spring garden journal."  # found by full text for a question about spring
FILLERS = 200  # 16 tokens each with the quoting: twice the 1 500-token budget


def filler(i: int) -> str:
    return f"Item {i}: files paperwork on Tuesdays."


@pytest.fixture
def fe():
    with FakeEmbeddings() as endpoint:
        yield endpoint


@pytest.fixture
def numi(setup_with):
    return setup_with(ENV)


def fill(setup, *first: str) -> list[str]:
    """`first` (the oldest), then the fillers: far past the budget. Every memory's text, oldest first."""
    texts = [*first, *(filler(i) for i in range(FILLERS))]
    for text in texts:
        add(setup, text)
    return texts


def vector_rows(setup) -> list[tuple[str, str, bytes]]:
    """(memory text, model, vector BLOB) of every vector as the database file holds them."""
    with sqlite3.connect(f"file:{setup.server.data_dir / 'numi.db'}?mode=ro", uri=True) as con:
        return list(con.execute("SELECT m.text, v.model, v.vector FROM memory_vector v "
                                "LEFT JOIN memory m ON m.seq = v.seq ORDER BY v.seq"))


def embedded(setup, count: int, model: str = "fake-embed") -> list[tuple[str, str, bytes]]:
    """The vectors once all `count` memories have one by `model` (then a request ranks by them)."""
    seen: list[list] = []

    def done():
        seen.append(vector_rows(setup))
        return len(seen[-1]) == count and all(m == model for _, m, _ in seen[-1])

    wait_until(done, f"{count} memories to be embedded by {model}", timeout=30)
    return seen[-1]


def is_vector_of(blob: bytes, text: str, model: str = "fake-embed") -> bool:
    v = np.frombuffer(blob, dtype="<f4")
    return v.size == 256 and bool(np.allclose(v, embedding(text, model=model), atol=1e-5))


def ask(setup, sock, request_id: str, question: str):
    """One turn the model answers with text: its request."""
    setup.fake.enqueue([S.text("ok")])
    t = turn(sock, request_id, question)
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    return setup.fake.requests[-1]


def inspected(setup, chat: str) -> list[str]:
    """The memories the chat's next request would carry, as the inspector plans it."""
    r = setup.api.get(f"/api/chats/{chat}/inspect")
    assert r.status == 200, r
    text = r.body["body"]["messages"][0]["content"]
    if "<memories>" not in text:
        return []
    inner = text.split("<memories>\n", 1)[1].split("\n</memories>", 1)[0]
    return [line.removeprefix("<memory>").removesuffix("</memory>") for line in inner.split("\n")]


def memory_inputs(fe: FakeEmbeddings, texts: list[str]) -> list[list[str]]:
    """The requests that embedded memories (not a message), as their inputs."""
    return [s.inputs for s in fe.requests if s.inputs and s.inputs[0] in texts]


def test_a_memory_near_in_meaning_is_carried_only_with_embeddings_on(numi, fe):
    setup = numi
    texts = fill(setup, NEAR)
    chat = setup.chat(title="t")
    sock = setup.socket(chat)

    # Off (the default): full text alone, which finds nothing; the newest fill the budget.
    request = ask(setup, sock, "r1", QUESTION)
    chosen = carried(request)
    assert NEAR not in chosen and chosen and set(chosen) <= set(texts[-100:])
    assert f"of the {len(texts)} memories" in system_text(request)
    assert fe.requests == [] and vector_rows(setup) == []  # nothing asked while off

    use(setup.api, add_provider(setup.api, fe.base_url))
    rows = embedded(setup, len(texts))
    assert all(is_vector_of(blob, text) for text, _, blob in rows)
    batches = memory_inputs(fe, texts)
    assert sorted(t for b in batches for t in b) == sorted(texts)  # each memory once
    assert max(len(b) for b in batches) == BATCH and len(batches) == -(-len(texts) // BATCH)

    request = ask(setup, sock, "r2", QUESTION)
    chosen = carried(request)
    assert NEAR in chosen and f"of the {len(texts)} memories" in system_text(request)
    assert chosen[0] == NEAR  # listed oldest first, as ever
    assert fe.requests[-1].inputs == [QUESTION]  # the message's own embedding: one request
    # The meter and the inspector plan the same request again: its vector is not asked again.
    asked = len(fe.requests)
    assert NEAR in inspected(setup, chat)
    assert setup.api.get(f"/api/chats/{chat}/context").status == 200
    assert len(fe.requests) == asked

    # Off again: full text alone at once, and nothing asked.
    use(setup.api, None)
    wait_until(lambda: NEAR not in inspected(setup, chat), "memory to go by full text alone")
    assert NEAR not in carried(ask(setup, sock, "r3", QUESTION))
    assert len(fe.requests) == asked


def test_a_new_model_embeds_every_memory_again_and_full_text_chooses_until_it_is_done(numi, fe):
    setup = numi
    texts = fill(setup, NEAR)
    provider = add_provider(setup.api, fe.base_url)
    use(setup.api, provider)
    embedded(setup, len(texts))
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    assert NEAR in carried(ask(setup, sock, "r1", QUESTION))

    fe.hold()
    use(setup.api, provider, model="fake-embed-2")
    fe.wait_held()  # the new model's first batch
    wait_until(lambda: NEAR not in inspected(setup, chat), "the old model's vectors to be dropped")
    asked = len(fe.requests)
    assert NEAR not in carried(ask(setup, sock, "r2", QUESTION))  # partial: full text alone
    assert len(fe.requests) == asked  # and no message embedded meanwhile

    fe.release()
    rows = embedded(setup, len(texts), model="fake-embed-2")
    assert all(is_vector_of(blob, text, "fake-embed-2") for text, _, blob in rows)
    assert NEAR in carried(ask(setup, sock, "r3", QUESTION))
    assert fe.requests[-1].model == "fake-embed-2" and fe.requests[-1].inputs == [QUESTION]


@pytest.mark.parametrize("how", ["fails", "hangs"])
def test_when_the_message_cannot_be_embedded_the_request_goes_by_full_text(numi, fe, how):
    setup = numi
    texts = fill(setup, NEAR, SPRING)
    use(setup.api, add_provider(setup.api, fe.base_url))
    embedded(setup, len(texts))
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    assert NEAR in carried(ask(setup, sock, "r1", QUESTION))  # embeddings work

    asked = len(fe.requests)
    if how == "fails":
        fe.fail(503)
    else:
        fe.hold()
    started = time.monotonic()
    request = ask(setup, sock, "r2", "How are my bees this spring?")
    took = time.monotonic() - started
    assert len(fe.requests) == asked + 1  # its message was asked for, once
    chosen = carried(request)
    assert SPRING in chosen and NEAR not in chosen  # full text alone
    if how == "hangs":  # waited for the short timeout, not the provider's 10 s
        assert QUERY_TIMEOUT_S <= took < 8, took

    # For a while after, full text at once: the endpoint is not asked again (nothing to wait for).
    chosen = carried(ask(setup, sock, "r3", "Bees and spring, any tips?"))
    assert SPRING in chosen and NEAR not in chosen
    assert len(fe.requests) == asked + 1
    fe.release()
    fe.fail(None)


def test_an_edited_memory_is_embedded_again_and_forgetting_everything_leaves_no_vector(numi, fe):
    setup = numi
    kept = add(setup, "Plays the cello on Sundays.")
    edited = add(setup, "Drinks green tea without sugar.")
    gone = add(setup, "Has a cat called Miso.")
    use(setup.api, add_provider(setup.api, fe.base_url))
    rows = embedded(setup, 3)
    assert all(is_vector_of(blob, text) for text, _, blob in rows)

    r = setup.api.patch(f"/api/memories/{edited['id']}", {"text": "Drinks black coffee, two sugars."})
    assert r.status == 200, r
    # Its old vector goes with the old text at once; the new text is embedded soon after.
    assert "Drinks green tea without sugar." not in [t for t, _, _ in vector_rows(setup)]
    rows = embedded(setup, 3)
    assert {t for t, _, _ in rows} == {kept["text"], gone["text"], "Drinks black coffee, two sugars."}
    assert all(is_vector_of(blob, text) for text, _, blob in rows)
    assert "Drinks black coffee, two sugars." in fe.inputs

    assert setup.api.delete(f"/api/memories/{gone['id']}").status == 204
    assert [t for t, _, _ in vector_rows(setup)] == [kept["text"], "Drinks black coffee, two sugars."]

    assert setup.api.delete("/api/memories").status == 204
    assert memories(setup) == [] and vector_rows(setup) == []
    # Memories saved afterwards are embedded as ever.
    add(setup, "Plays the viola now.")
    (row,) = embedded(setup, 1)
    assert row[0] == "Plays the viola now." and is_vector_of(row[2], row[0])
