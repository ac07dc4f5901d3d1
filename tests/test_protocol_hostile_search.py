"""Hostile search answers through the real server: half characters in results never close a
socket or lose a turn, and an answer nested too deeply ends research with a sentence."""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S
from tests.fakesearch import FakeSearch
from tests.research_fakes import use_searxng
from tests.test_protocol_modes import call, tooled, turn  # noqa: F401 (tooled: a fixture)


@pytest.fixture
def searxng():
    fake = FakeSearch("searxng")
    yield fake
    fake.close()


def still_open(sock) -> None:
    sock.send(type="ping")
    sock.until("pong")


def test_half_characters_in_search_results_never_close_a_socket(tooled, searxng):
    setup = tooled
    use_searxng(setup.api, searxng.url)
    # The fake writes them as JSON escapes ("\ud800"), which decode to half a character each.
    searxng.results = [("Half \ud800 title", "https://one.example/\udc00", "pair \ud83d\ude00 then \udbff"),
                       ("Plain", "https://two.example/", "fine")]
    assert "\\ud800" in json.dumps(searxng.results)
    chat = setup.chat(title="t")
    setup.fake.enqueue([call(0, "web_search", {"query": "half"})], [S.text("Found [1] and [2].")])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    event = sock.until("sources", turn_id=t)
    assert sock.until("turn_end", turn_id=t)["status"] == "completed", sock.of("error")
    items = [{"n": 1, "title": "Half \ufffd title", "url": "https://one.example/\ufffd",
              "snippet": "pair \U0001F600 then \ufffd"},
             {"n": 2, "title": "Plain", "url": "https://two.example/", "snippet": "fine"}]
    assert event["items"] == items and not sock.of("error")
    still_open(sock)
    # The reply and its sources are saved, the half characters replaced; the model read them so too.
    final = setup.messages(chat)[-1]
    assert final["content"] == "Found [1] and [2]." and final["sources"] == [dict(i, kind="web") for i in items]
    assert "Title: Half \ufffd title" in setup.fake.requests[-1].body["messages"][-1]["content"]
    # A resume on a new socket replays the turn, sources included, and that socket stays open too.
    again = setup.socket(chat)
    again.send(type="resume", after_event_id=0)
    again.until("turn_end", turn_id=t)
    assert again.of("sources") == [event] and not again.of("error")
    still_open(again)
    still_open(sock)


def test_a_deeply_nested_searxng_answer_ends_research_with_a_sentence(setup, searxng):
    use_searxng(setup.api, searxng.url)
    for _ in range(2):  # one answer for each planned search
        searxng.answer(200, "[" * 100_000 + "]" * 100_000, {"Content-Type": "application/json"})
    setup.fake.enqueue([S.text(json.dumps(["first query", "second query"]))])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="What is Numi?", research=True)
    assert sock.until("turn_end")["status"] == "failed"
    error = sock.of("error")[-1]
    assert error["code"] == "no_sources", error  # not `internal`: the searches failed with a sentence
    assert error["message"].startswith("The searches found no pages to read.")
    assert "nested too deeply" in error["message"]  # the reason every search failed
    assert [s.query.get("q") for s in searxng.seen] == ["first query", "second query"]  # both were asked
    still_open(sock)
    # Control: the same research with answers that can be read finds sources.
    page = f"{searxng.url}/numi"
    searxng.page_html = {"/numi": "<html><head><title>Numi</title></head><body><p>A chat app.</p></body></html>"}
    searxng.results = [("Numi", page, "A chat app.")]
    setup.fake.enqueue([S.text(json.dumps(["third query"]))], [S.text("Numi is a chat app [1].")])
    sock.send(type="send", request_id="r2", content="What is Numi, again?", research=True)
    turn_id = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", turn_id=turn_id)["status"] == "completed", sock.of("error", turn_id)
    assert setup.messages(chat)[-1]["sources"][0]["url"] == page
