"""Research turns through the real server: the fake provider plans and writes, a fake SearXNG
finds fake pages on loopback. Phases arrive in order with their counts, the report is saved,
it survives a closed socket, Stop keeps what was written, each limit says so, Continue goes on,
and a page's injected instructions stay quoted data."""
from __future__ import annotations

import json
import re
import threading

import pytest

from backend.tools.web_search import QUOTE_NOTE
from tests.fakeprovider import script as S
from tests.research_fakes import INJECTION, FakeWeb, page_html, trust_local, use_searxng

PLAN = json.dumps(["first query", "second query"])
REPORT = "Numi is a chat app [1]. It keeps history locally [2]."


@pytest.fixture
def web():
    fake = FakeWeb({str(i): page_html(str(i), f"<p>Fact number {i} about the subject.</p>") for i in range(1, 7)})
    yield fake
    fake.close()


@pytest.fixture
def rsetup(setup, web):
    use_searxng(setup.api, web.url)
    trust_local(setup.api, web.url)
    return setup


def limits(setup, **values) -> None:
    r = setup.api.patch("/api/settings", {"research": values})
    assert r.status == 200, r


def research(sock, content="What is Numi?", request_id="r1") -> None:
    sock.send(type="send", request_id=request_id, content=content, research=True)


def progress(sock) -> list[dict]:
    return sock.of("research_progress")


def report_request(setup) -> dict:
    """The fake provider's last request: the one that wrote the report."""
    return setup.fake.requests[-1].body


def test_a_research_turn_plans_searches_reads_and_writes_a_saved_report(rsetup, web):
    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    events = progress(sock)
    phases = [e["phase"] for e in events]
    # Each phase once, in order: repeats of a phase only carry newer counts.
    assert list(dict.fromkeys(phases)) == ["planning", "searching", "reading", "writing"], phases
    assert phases == sorted(phases, key=["planning", "searching", "reading", "writing"].index)
    last = events[-1]
    assert last == {**last, "phase": "writing", "searches": 2, "found": 6, "read": 6}
    for a, b in zip(events, events[1:]):  # counts only grow
        assert all(b[k] >= a[k] for k in ("searches", "found", "read"))
    assert web.queries == ["first query", "second query"]
    # The report streams after the writing phase began, and is saved as the reply.
    first_content = next(e for e in sock.events if e["type"] == "content")
    assert first_content["event_id"] > last["event_id"]
    assert sock.text() == REPORT
    saved = setup.messages(chat)[-1]
    assert (saved["role"], saved["content"], saved["status"]) == ("assistant", REPORT, "complete")
    assert setup.messages(chat)[0]["research"] is True  # the question says it asked for research
    # Each search's results went out as `sources` while searching, numbered from 1 in the order found.
    found = sock.of("sources")
    assert [e["kind"] for e in found] == ["web", "web"]
    searching, reading = (next(e["event_id"] for e in events if e["phase"] == p) for p in ("searching", "reading"))
    assert all(searching < e["event_id"] < reading for e in found)
    items = [item for e in found for item in e["items"]]
    assert [(i["n"], i["url"]) for i in items] == [(n, web.page_url(str(n))) for n in range(1, 7)]
    # The report keeps them under the numbers it cites: [1] and [2] are pages 1 and 2.
    assert saved["sources"] == [dict(item, kind="web") for item in items]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", REPORT)}
    assert {s["n"]: s["url"] for s in saved["sources"] if s["n"] in cited} == {1: web.page_url("1"),
                                                                                2: web.page_url("2")}
    # The plan was asked without tools; the report from the pages, quoted as untrusted data.
    plan_request, write_request = (r.body for r in setup.fake.requests[-2:])
    assert "JSON array" in plan_request["messages"][0]["content"] and not plan_request.get("tools")
    assert not write_request.get("tools")
    asked = write_request["messages"][-1]["content"]
    assert asked.startswith("What is Numi?") and QUOTE_NOTE in asked
    for n in range(1, 7):
        assert f'<source n="{n}" url="{web.page_url(str(n))}"' in asked
    assert "Fact number 4 about the subject." in asked


def test_page_instructions_stay_quoted_data_and_run_nothing(rsetup, web):
    setup = rsetup
    web.pages["1"] = page_html("1", INJECTION)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "completed"
    assert not sock.of("tool_start") and not sock.of("approval_required")
    asked = report_request(setup)["messages"][-1]["content"]
    assert "IGNORE ALL PREVIOUS INSTRUCTIONS" in asked  # read, as data
    # The page can neither close its quote nor open another: its tags are made inert, its script is gone.
    body = asked.split(f'<source n="1" url="{web.page_url("1")}">', 1)[1].split("</source>", 1)[0]
    assert '<\\/source><\\source n="99">' in body and "__pwned = 2" not in asked
    assert asked.count("<source ") == 6


def test_the_report_survives_a_closed_socket(rsetup):
    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.text("Part one [1]. "), S.hang(), S.text("Part two [2].")])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    sock.until("content")
    sock.close()
    setup.fake.wait_hanging()
    setup.fake.release()
    again = setup.socket(chat)
    again.send(type="resume", after_event_id=0)
    assert again.until("turn_end")["status"] == "completed"
    assert [e["phase"] for e in progress(again)][-1] == "writing"
    saved = setup.messages(chat)[-1]
    assert saved["content"] == "Part one [1]. Part two [2]." == again.text()


def test_an_edited_question_and_a_regenerated_report_research_again(rsetup):
    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "completed"
    question, report = setup.messages(chat)
    for frame in ({"type": "regenerate", "message_id": report["id"], "request_id": "g1"},
                  {"type": "edit", "message_id": question["id"], "content": "And Numi's history?", "request_id": "e1"}):
        setup.fake.enqueue([S.text(PLAN)], [S.text("Again [1].")])
        sock.send(**frame)
        turn = sock.until("turn_start")["turn_id"]
        assert sock.until("turn_end", turn_id=turn)["status"] == "completed"
        phases = [e["phase"] for e in progress(sock) if e["turn_id"] == turn]
        assert list(dict.fromkeys(phases)) == ["planning", "searching", "reading", "writing"], frame["type"]
        assert setup.messages(chat)[-1]["content"] == "Again [1]."
    assert setup.messages(chat)[0]["content"] == "And Numi's history?" and setup.messages(chat)[0]["research"] is True


def test_stop_keeps_the_report_written_so_far(rsetup):
    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.text("The first finding [1]."), S.hang()])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    sock.until("content")
    setup.fake.wait_hanging()
    sock.send(type="stop")
    assert sock.until("turn_end")["status"] == "cancelled"
    saved = setup.messages(chat)[-1]
    assert (saved["content"], saved["status"]) == ("The first finding [1].", "cancelled")
    setup.fake.release()


def test_stop_while_searching_ends_at_once_and_writes_nothing(rsetup, web):
    setup = rsetup
    web.hold()
    setup.fake.enqueue([S.text(PLAN)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert web.waiting.acquire(timeout=10)
    sock.send(type="stop")
    assert sock.until("turn_end", timeout=5)["status"] == "cancelled"
    assert sock.of("error")[-1]["code"] == "cancelled"
    assert [m["role"] for m in setup.messages(chat)] == ["user"]
    web.release()


def test_the_search_limit_runs_the_first_searches_and_says_so(rsetup, web):
    setup = rsetup
    limits(setup, max_searches=1)
    setup.fake.enqueue([S.text(json.dumps(["a", "b", "c"]))], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "completed"
    assert web.queries == ["a"]
    writing = progress(sock)[-1]
    assert writing["phase"] == "writing" and writing["searches"] == 1
    assert writing["notice"] == ("The plan had 3 searches; 1 ran, the limit for one research "
                                 "(Settings → Research).")


def test_the_page_limit_reads_the_best_pages_and_says_so(rsetup, web):
    setup = rsetup
    limits(setup, max_pages=2)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "completed"
    # The first result of each search first.
    assert sorted(web.fetched) == ["1", "4"]
    writing = progress(sock)[-1]
    assert writing["read"] == 2 and writing["found"] == 6
    assert writing["notice"] == ("Read 2 pages, the limit for one research (Settings → Research); "
                                 "4 more results were not opened.")
    asked = report_request(setup)["messages"][-1]["content"]
    assert "Fact number 4" in asked and "Fact number 2" not in asked  # unread: its snippet only
    assert "Snippet of page 2 for first query" in asked


class SlowFirstPage(FakeWeb):
    """Page 1 answers only once page 4 was asked for (or after 10 s): read in turn, it would wait."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked_for_4 = threading.Event()
        self.overlapped = None

    def _web(self, seen):
        if seen.path == "/page/4":
            self.asked_for_4.set()
        elif seen.path == "/page/1":
            self.overlapped = self.asked_for_4.wait(10)
        return super()._web(seen)


def test_pages_are_read_side_by_side_and_reported_in_rank_order(setup):
    web = SlowFirstPage({str(i): page_html(str(i), f"<p>Fact number {i}.</p>") for i in range(1, 7)})
    try:
        use_searxng(setup.api, web.url)
        trust_local(setup.api, web.url)
        setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
        sock = setup.socket(setup.chat(title="r"))
        research(sock)
        assert sock.until("turn_end")["status"] == "completed"
        assert web.overlapped is True, "page 4 was not asked for while page 1 was being read"
        assert sorted(web.fetched) == [str(i) for i in range(1, 7)]
        # Page 1 answered after page 4, yet the report's request quotes the pages best first.
        asked = report_request(setup)["messages"][-1]["content"]
        at = [asked.index(f'<source n="{n}" url="{web.page_url(str(n))}"') for n in (1, 4, 2, 5, 3, 6)]
        assert at == sorted(at)
    finally:
        web.close()


def test_the_time_limit_ends_the_turn_and_continue_researches_again(rsetup, web):
    setup = rsetup
    limits(setup, max_minutes=0.05)  # 3 s
    web.hold()
    setup.fake.enqueue([S.text(PLAN)])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end", timeout=10)["status"] == "limit"
    error = sock.of("error")[-1]
    assert error["code"] == "limit"
    assert error["message"] == ("The research reached its 0.05-minute limit (Settings → Research) after 0 searches "
                                "and 0 pages read. Nothing was found in that time; Continue to research again "
                                "with a fresh allowance.")
    web.release()
    limits(setup, max_minutes=10)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    sock.send(type="continue")
    turn = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end")["status"] == "completed"
    assert [e["phase"] for e in progress(sock) if e["turn_id"] == turn][0] == "planning"
    assert [m["content"] for m in setup.messages(chat)] == ["What is Numi?", REPORT]


def test_the_time_limit_while_writing_keeps_the_report_and_continue_finishes_it(rsetup):
    setup = rsetup
    limits(setup, max_minutes=0.05)
    setup.fake.enqueue([S.text(PLAN)], [S.text("Half a report [1]"), S.hang()])
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    # Writing gets time of its own when gathering used the limit up: held here past it.
    assert sock.until("turn_end", timeout=15)["status"] == "limit"
    assert sock.of("error")[-1]["message"].startswith("The research reached its 0.05-minute limit")
    saved = setup.messages(chat)[-1]
    assert saved["content"] == "Half a report [1]" and saved["error"]["code"] == "limit"
    setup.fake.release()
    setup.fake.enqueue([S.text(" and the rest.")])
    limits(setup, max_minutes=10)
    sock.send(type="continue")
    turn = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end")["status"] == "completed"
    assert setup.messages(chat)[-1]["content"] == "Half a report [1] and the rest." == sock.text(turn)


def test_research_without_a_search_backend_says_how_to_add_one(setup):
    chat = setup.chat(title="r")
    sock = setup.socket(chat)
    research(sock)
    assert sock.until("turn_end")["status"] == "failed"
    error = sock.of("error")[-1]
    assert error["code"] == "no_search" and "Settings → Web search" in error["message"]
    assert not setup.fake.requests  # no model request wasted


def test_research_settings_are_validated(api):
    assert api.get("/api/settings").body["research"] == {"max_minutes": 10, "max_searches": 8, "max_pages": 12}
    r = api.patch("/api/settings", {"research": {"max_pages": 0, "max_searches": 2.5, "max_minutes": "5"}})
    assert r.status == 422, r
    fields = r.body["error"]["fields"] if "fields" in r.body["error"] else r.body["error"]
    text = json.dumps(fields)
    assert "research.max_pages" in text and "research.max_searches" in text and "research.max_minutes" in text
    assert api.get("/api/settings").body["research"]["max_pages"] == 12  # a refused PATCH changes nothing
    r = api.patch("/api/settings", {"research": {"max_pages": 3, "pages": 4}})
    assert r.status == 422 and "research.pages" in json.dumps(r.body["error"]), r
    assert api.get("/api/settings").body["research"]["max_pages"] == 12
    r = api.patch("/api/settings", {"research": {"max_pages": 3}})
    assert r.status == 200 and r.body["research"] == {"max_minutes": 10, "max_searches": 8, "max_pages": 3}
    assert api.patch("/api/settings", {"research": 5}).status == 422


def test_a_research_frame_is_checked(rsetup):
    chat = rsetup.chat(title="r")
    sock = rsetup.socket(chat)
    sock.send(type="send", request_id="r1", content="x", research="yes")
    assert sock.until("error")["code"] == "bad_request"
    sock.send(type="send", request_id="r2", content="x", research=True, mode="steer")
    assert "cannot steer" in sock.until("error")["message"]


def test_a_research_turn_with_no_window_open_ends_unread_for_the_tray_to_notify(rsetup):
    """The tray notifies a finished turn when the chat's `running` goes false (desktop/turns.py);
    with no window on the chat, the chat is left unread."""
    from tests.numi_client import AppSocket

    setup = rsetup
    setup.fake.enqueue([S.text(PLAN)], [S.hang(), S.text(REPORT)])
    chat = setup.chat(title="r")
    app = AppSocket(setup.server)
    sock = setup.socket(chat)
    research(sock)
    app.chat(chat, running=True)
    setup.fake.wait_hanging()
    sock.close()  # the window closes while the report is written
    setup.fake.release()
    done = app.chat(chat, running=False)
    assert done["unread"] is True
    assert setup.messages(chat)[-1]["content"] == REPORT
    app.close()
