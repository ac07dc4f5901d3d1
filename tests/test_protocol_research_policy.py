"""Research turns through the real server honour the person's tool policies and never read their own
network on a search result's word (issue 31): `web_search` set to deny refuses before anything is
asked or searched, `web_fetch` set to deny writes from snippets, `ask` asks once for the searches and
once for the reads (what the person edits is what runs), and a result naming a service on this
computer or a private network is left unread unless its origin is trusted or the person typed it."""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S
from tests.research_fakes import FakeWeb, page_html, trust_local, use_searxng

PLAN = json.dumps(["first query", "second query"])
REPORT = "A report [1]."


@pytest.fixture
def web():
    fake = FakeWeb({str(i): page_html(str(i), f"<p>Fact number {i}.</p>") for i in range(1, 7)}
                   | {"effect": "<p>A GET that changed something.</p>"})
    yield fake
    fake.close()


@pytest.fixture
def rsetup(setup, web):
    use_searxng(setup.api, web.url)
    return setup


def policy(setup, tool: str, value: str | None, chat: str | None = None) -> None:
    body = {"tool": tool, "policy": value, **({"chat_id": chat} if chat else {})}
    r = setup.api.put("/api/approvals/policy", body)
    assert r.status == 200, r


def research(setup, chat: str, content: str = "What is Numi?", request_id: str = "r1"):
    sock = setup.socket(chat)
    sock.send(type="send", request_id=request_id, content=content, research=True)
    return sock


def writing_notice(sock) -> str:
    events = [e for e in sock.of("research_progress") if e["phase"] == "writing"]
    return events[-1].get("notice", "") if events else ""


def effects(web) -> int:
    return web.fetched.count("effect")


# --- policies --------------------------------------------------------------------------------

def test_web_search_set_to_deny_refuses_before_anything_is_asked_or_searched(rsetup, web):
    setup = rsetup
    trust_local(setup.api, web.url)
    policy(setup, "web_search", "deny")  # the default for every chat
    chat = setup.chat(title="r")
    sock = research(setup, chat)
    assert sock.until("turn_end")["status"] == "failed"
    error = sock.of("error")[-1]
    assert error["code"] == "research_refused"
    assert error["message"] == ("Nothing was searched: web_search is turned off for this chat in Settings → "
                                "Approvals. Allow it there, or send the question without Research.")
    assert web.queries == [] and web.fetched == []
    assert not setup.fake.requests  # not even the plan was asked for
    assert not sock.of("approval_required")
    # Control: without the policy the same research searches and reads.
    policy(setup, "web_search", None)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    sock.send(type="send", request_id="r2", content="What is Numi?", research=True)
    turn = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", turn_id=turn)["status"] == "completed"
    assert web.queries == ["first query", "second query"] and len(web.fetched) == 6


def test_web_fetch_set_to_deny_reads_nothing_and_writes_from_the_snippets(rsetup, web):
    setup = rsetup
    trust_local(setup.api, web.url)
    chat = setup.chat(title="r")
    policy(setup, "web_fetch", "deny", chat)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    sock = research(setup, chat)
    assert sock.until("turn_end")["status"] == "completed"
    assert web.queries == ["first query", "second query"] and web.fetched == []
    assert writing_notice(sock) == ("No page was read: web_fetch is turned off for this chat in Settings → "
                                    "Approvals. The report uses the search results' snippets only.")
    asked = setup.fake.requests[-1].body["messages"][-1]["content"]
    assert "Snippet of page 1 for first query" in asked and "Fact number 1" not in asked
    assert not sock.of("approval_required")


def test_ask_asks_once_for_the_searches_and_once_for_the_reads_and_runs_what_was_approved(rsetup, web):
    setup = rsetup
    trust_local(setup.api, web.url)
    chat = setup.chat(title="r")
    policy(setup, "web_search", "ask", chat)
    policy(setup, "web_fetch", "ask", chat)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    sock = research(setup, chat)
    searches = sock.until("approval_required")
    assert searches["name"] == "web_search"
    assert json.loads(searches["arguments"]) == {"queries": ["first query", "second query"]}
    assert web.queries == []  # nothing searched while the card waits
    sock.send(type="approve", approval_id=searches["approval_id"], decision="allow",
              arguments={"queries": ["the edited query"]})
    reads = sock.until("approval_required")
    assert reads["name"] == "web_fetch" and reads["can_always"] is False
    urls = json.loads(reads["arguments"])["urls"]
    assert urls == [web.page_url(str(n)) for n in (1, 2, 3)]  # the one search's results
    assert web.fetched == []
    sock.send(type="approve", approval_id=reads["approval_id"], decision="allow", arguments={"urls": urls[:2]})
    assert sock.until("turn_end")["status"] == "completed"
    assert len(sock.of("approval_required")) == 2
    assert web.queries == ["the edited query"]
    assert sorted(web.fetched) == ["1", "2"]  # page 3 was left out on the card


def test_reads_the_person_refuses_leave_the_report_to_the_snippets(rsetup, web):
    setup = rsetup
    trust_local(setup.api, web.url)
    chat = setup.chat(title="r")
    policy(setup, "web_fetch", "ask", chat)
    setup.fake.enqueue([S.text(PLAN)], [S.text(REPORT)])
    sock = research(setup, chat)
    reads = sock.until("approval_required")  # web_search has no policy: the research request is its go-ahead
    assert reads["name"] == "web_fetch"
    sock.send(type="approve", approval_id=reads["approval_id"], decision="deny", reason="not today")
    assert sock.until("turn_end")["status"] == "completed"
    assert web.fetched == [] and len(web.queries) == 2
    assert writing_notice(sock) == ("You did not allow reading the pages, so the report uses the search results' "
                                    'snippets only. You said: "not today"')


def test_refused_searches_end_the_turn_with_a_sentence(rsetup, web):
    setup = rsetup
    chat = setup.chat(title="r")
    policy(setup, "web_search", "ask", chat)
    setup.fake.enqueue([S.text(PLAN)])
    sock = research(setup, chat)
    searches = sock.until("approval_required")
    sock.send(type="approve", approval_id=searches["approval_id"], decision="deny")
    assert sock.until("turn_end")["status"] == "failed"
    error = sock.of("error")[-1]
    assert (error["code"], error["message"]) == ("research_refused",
                                                 "You did not allow the searches, so nothing was searched.")
    assert web.queries == []


# --- the person's own network --------------------------------------------------------------------

LOCAL_HOSTS = ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "localhost", "localhost.", "[::1]",
               "[::ffff:127.0.0.1]", "0.0.0.0", "[::]", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254",
               "100.64.0.1", "[fc00::1]", "[fe80::1]", "[64:ff9b::7f00:1]"]


def test_results_on_the_persons_own_network_are_never_read(rsetup, web):
    setup = rsetup
    port = web.port
    web.per_query = 6
    web.targets = [(f"Service {i}", f"http://{host}:{port}/page/effect?n={i}", f"Snippet {i}")
                   for i, host in enumerate(LOCAL_HOSTS)]
    plan = json.dumps(["a", "b", "c"])
    setup.fake.enqueue([S.text(plan)], [S.text(REPORT)])
    chat = setup.chat(title="r")
    sock = research(setup, chat)
    assert sock.until("turn_end")["status"] == "completed"
    assert effects(web) == 0
    assert writing_notice(sock) == (
        f"{len(LOCAL_HOSTS)} results were on this computer or a private network and were not read (only their "
        f"snippet is used). To let research read such a site, type its address in the question or list it "
        f"under Settings → Web fetch.")
    assert f"Snippet {len(LOCAL_HOSTS) - 1}" in setup.fake.requests[-1].body["messages"][-1]["content"]

    # Control: the service's origin trusted, and another spelling of it typed in the question: both read.
    trust_local(setup.api, web.url)
    typed = f"http://127.1:{port}/page/effect?n=1"
    web.queries.clear()  # the searches find the same results again
    setup.fake.enqueue([S.text(plan)], [S.text(REPORT)])
    sock.send(type="send", request_id="r2", content=f"What does {typed} say?", research=True)
    turn = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", turn_id=turn)["status"] == "completed"
    assert effects(web) == 2
    assert writing_notice(sock).startswith(f"{len(LOCAL_HOSTS) - 2} results were on this computer")


def test_a_trusted_page_that_redirects_elsewhere_on_this_computer_is_not_followed(rsetup, web):
    setup = rsetup
    trust_local(setup.api, web.url)
    web.redirects = {"/jump": f"http://127.1:{web.port}/page/effect",  # another origin: not trusted
                     "/stay": f"{web.url}/page/effect"}  # the trusted origin itself (control)
    web.targets = [("Jump", f"{web.url}/jump", "j"), ("Stay", f"{web.url}/stay", "s")]
    setup.fake.enqueue([S.text(json.dumps(["one"]))], [S.text(REPORT)])
    sock = research(setup, setup.chat(title="r"))
    assert sock.until("turn_end")["status"] == "completed"
    assert sorted(web.fetched) == ["/jump", "/stay", "effect"]  # the effect once: through /stay
    assert writing_notice(sock).startswith("1 result was on this computer or a private network and was not read")
