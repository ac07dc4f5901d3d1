"""A reply's sources survive kill -9 while it streams (CONTRACT §4 rule 3, §8), over the real server:
the partial commits carry them from the first one, Continue keeps them, and a finished turn has
them on its final reply only."""
from __future__ import annotations

import json
import re
import time

from tests.fakeprovider import script as S
from tests.test_protocol_modes import tooled, turn  # noqa: F401 (tooled: a fixture)
from tests.test_protocol_research import PLAN, research, rsetup, web  # noqa: F401 (rsetup, web: fixtures)
from tests.test_protocol_web_search import search_call, searxng, use  # noqa: F401 (searxng: a fixture)


def restart(setup) -> None:
    setup.server.start()
    setup.api = setup.server.api()


def committed(setup, chat: str, content: str, timeout: float = 10.0) -> dict:
    """The chat's newest message once the partial commit holding `content` is on disk (read
    back through the API: the commits themselves send no event)."""
    deadline = time.monotonic() + timeout
    while True:
        last = setup.messages(chat)[-1]
        if last["content"] == content:
            return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"{content!r} was not committed within {timeout}s; last is {last!r}")
        time.sleep(0.05)


def cited(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


def test_kill9_while_a_report_streams_keeps_its_sources_and_continue_cites_them(rsetup, web):
    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.text("Part one [1]. "), S.hang()])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    announced = [item for e in [sock.until("sources"), sock.until("sources")] for item in e["items"]]
    sock.until("content")
    setup.fake.wait_hanging()
    committed(setup, chat, "Part one [1]. ")
    setup.server.kill9()
    restart(setup)

    report = setup.messages(chat)[-1]
    assert (report["role"], report["status"], report["content"]) == ("assistant", "interrupted", "Part one [1]. ")
    assert report["sources"] == [dict(item, kind="web") for item in announced]
    assert len(report["sources"]) == 6

    setup.fake.enqueue([S.text("Part two [2], and the last word [6].")])
    again = setup.socket(chat)
    again.send(type="continue")
    assert again.until("turn_end")["status"] == "completed", again.of("error")
    final = setup.messages(chat)[-1]
    assert final["id"] == report["id"] and final["status"] == "complete"
    assert final["content"] == "Part one [1]. Part two [2], and the last word [6]."
    assert final["sources"] == report["sources"]
    assert cited(final["content"]) <= {s["n"] for s in final["sources"]}
    setup.fake.release()


def test_kill9_while_an_ordinary_reply_streams_keeps_the_sources_its_search_found(tooled, searxng):
    setup = tooled
    use(setup, backend="searxng", url=searxng.url)
    searxng.results = [("Numi 1.0", "https://one.example/a", "The release."),
                       ("Notes", "https://two.example/b", "What changed.")]
    chat = setup.chat(title="t")
    setup.fake.enqueue([search_call(0, "numi release")], [S.text("Numi 1.0 is out [1]"), S.hang()])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    found = sock.until("sources", turn_id=t)["items"]
    sock.until("content", turn_id=t)
    setup.fake.wait_hanging()
    committed(setup, chat, "Numi 1.0 is out [1]")
    setup.server.kill9()
    restart(setup)

    rows = setup.messages(chat)
    reply = rows[-1]
    assert (reply["status"], reply["content"]) == ("interrupted", "Numi 1.0 is out [1]")
    assert reply["sources"] == [dict(item, kind="web") for item in found]
    assert all(m["sources"] == [] for m in rows[:-1])  # the search's caller and its result: none

    setup.fake.enqueue([S.text("; the notes are at [2].")])
    again = setup.socket(chat)
    again.send(type="continue")
    assert again.until("turn_end")["status"] == "completed", again.of("error")
    final = setup.messages(chat)[-1]
    assert final["id"] == reply["id"] and final["content"] == "Numi 1.0 is out [1]; the notes are at [2]."
    assert final["sources"] == reply["sources"] and cited(final["content"]) == {1, 2}
    setup.fake.release()


def test_a_step_that_held_the_sources_while_it_streamed_gives_them_to_the_final_reply(tooled, searxng):
    setup = tooled
    use(setup, backend="searxng", url=searxng.url)
    searxng.results = [("First", "https://one.example/", "one")]
    chat = setup.chat(title="t")
    # Step 2 cites [1] and is committed with it, then searches again: step 3 is the final reply.
    setup.fake.enqueue([search_call(0, "first")],
                       [S.text("Checking [1] again."), S.hang(), search_call(0, "second")],
                       [S.text("Both say so [1][2].")])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    sock.until("sources", turn_id=t)
    setup.fake.wait_hanging()
    middle = committed(setup, chat, "Checking [1] again.")
    assert [s["n"] for s in middle["sources"]] == [1]  # held while it streams
    searxng.results = [("Second", "https://two.example/", "two")]
    setup.fake.release()
    assert sock.until("turn_end", turn_id=t)["status"] == "completed", sock.of("error")
    rows = setup.messages(chat)
    assert rows[-1]["content"] == "Both say so [1][2]."
    assert [(s["n"], s["url"]) for s in rows[-1]["sources"]] == [(1, "https://one.example/"),
                                                                 (2, "https://two.example/")]
    assert all(m["sources"] == [] for m in rows[:-1]), json.dumps([m["sources"] for m in rows])
