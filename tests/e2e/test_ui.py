"""The window in a real Chromium against the real server and the fake provider.

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or on the
fake provider's own events (a response parked in a `hang` step): no sleeps.
"""
from __future__ import annotations

import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in, wait_chat_ready, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


# --- helpers ---------------------------------------------------------------------

def tokens(n: int, start: int = 0) -> list[str]:
    """Distinct words, so a duplicated or dropped piece shows in the word list."""
    return [f"t{i:03d} " for i in range(start, start + n)]


def words(text: str) -> list[str]:
    return text.split()


def user_msgs(page):
    return page.locator("article.msg.user")


def body_text(msg) -> str:
    return msg.locator(".msg-body").inner_text()


def stored(setup, chat_id) -> list[tuple[str, str, str]]:
    return [(m["role"], m["content"], m["status"]) for m in setup.messages(chat_id)]


def expect_rendered_equals_stored(page, setup, chat_id) -> str:
    """The last reply on screen has exactly the words of the saved one; returns the saved text."""
    last = setup.messages(chat_id)[-1]
    assert last["role"] == "assistant"
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", last["status"])
    assert words(body_text(reply)) == words(last["content"])
    return last["content"]


# --- 1. first run ------------------------------------------------------------------

def test_first_run_local_server_suggestion_to_first_answer(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": f"Fake={fake.port}"})
    sign_in(page, server)
    expect(page.get_by_role("heading", name="Welcome to Numi")).to_be_visible()
    card = page.locator(".local-list .card", has_text="Fake")
    expect(card).to_contain_text(fake.base_url)
    expect(card).to_contain_text("1 model: fake-model")
    shot(page, "01-first-run")
    card.get_by_role("button", name="Use this").click()
    expect(page.get_by_role("heading", name="Fake is connected")).to_be_visible()
    expect(card.get_by_role("button", name="Connected")).to_be_disabled()
    expect(page.locator("#fr-model option:checked")).to_have_text(re.compile("fake.model", re.I))
    shot(page, "02-first-run-connected")
    page.get_by_role("button", name="Start chatting").click()
    box = page.locator(".composer-input")
    expect(box).to_be_focused()
    expect(box).to_be_enabled()
    fake.enqueue(S.reply("Hi! I am the fake model."))
    send(page, "Hello there")
    expect(page).to_have_url(re.compile(r"#/c/[^/]+$"))
    expect(user_msgs(page)).to_have_text(re.compile("Hello there"))
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_have_text("Hi! I am the fake model.")
    expect(reply).to_have_attribute("data-status", "complete")
    api = server.api()
    assert api.get("/api/settings").body["default_model_id"] == api.get("/api/models").body[0]["id"]
    chat_id = page.url.rsplit("/", 1)[1]
    msgs = api.get(f"/api/chats/{chat_id}/messages").body["items"]
    assert [(m["role"], m["content"]) for m in msgs] == [("user", "Hello there"),
                                                         ("assistant", "Hi! I am the fake model.")]
    shot(page, "03-first-answer")


def test_first_run_provider_form_to_first_answer(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": ""})  # nothing found on this computer
    sign_in(page, server)
    expect(page.locator(".local-list")).to_contain_text("None found")
    form = page.locator("form.provider-form")
    form.get_by_label("Kind").select_option("openai_compatible")
    form.get_by_label("Name").fill("My Fake")
    form.get_by_label("API address").fill(fake.base_url)
    form.get_by_role("button", name="Connect").click()
    expect(page.get_by_role("heading", name="My Fake is connected")).to_be_visible()
    page.get_by_role("button", name="Start chatting").click()
    fake.enqueue(S.reply("Connected through the form."))
    expect(page.locator(".composer-input")).to_be_enabled()
    send(page, "Hello")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Connected through the form.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    providers = server.api().get("/api/providers").body
    assert [(p["name"], p["base_url"]) for p in providers] == [("My Fake", fake.base_url)]


# --- 2. streaming ------------------------------------------------------------------

def test_send_and_watch_it_stream(page, setup):
    chat = setup.chat(title="E2E stream")
    first, rest = tokens(20), tokens(40, 20)
    # Slow tokens, and a pause half way so the streaming state is seen for certain.
    setup.fake.enqueue([S.delay(0.01)] + [S.text(t) for t in first] + [S.hang()] + [S.text(t) for t in rest])
    open_chat(page, setup.server, chat, "E2E stream")
    send(page, "Count for me")
    expect(user_msgs(page).last.locator(".msg-body")).to_have_text("Count for me")
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_contain_text("t019")
    setup.fake.wait_hanging()
    expect(reply).to_have_attribute("data-status", "streaming")
    expect(reply.locator(".msg-body")).to_have_attribute("aria-busy", "true")
    expect(page.locator(".stop-btn")).to_be_visible()
    expect(page.locator(".send-btn")).to_have_text("Queue")
    assert words(body_text(reply)) == words("".join(first))
    shot(page, "04-streaming")
    setup.fake.release()
    expect(reply).to_have_attribute("data-status", "complete")
    expect(reply.locator(".msg-body")).to_have_attribute("aria-busy", "false")
    expect(page.locator(".stop-btn")).to_be_hidden()
    expect(page.locator(".send-btn")).to_have_text("Send")
    content = expect_rendered_equals_stored(page, setup, chat)
    assert content == "".join(first + rest)
    # The saved row's usage arrives after the turn: the chips show.
    expect(reply.locator(".msg-usage .chip").first).to_be_visible()
    shot(page, "05-answer")


RICH_REPLY = """## Plan

A paragraph with **bold**, `code`, a [link](https://example.com/a) and *emphasis*
that wraps onto a second line.

- first item
- second item with `code`
  - nested under the second

  a second paragraph of the second item
- third item

1. one
2. two

```python
def f(x):
    return x * 2
```

> a quoted line
> and its continuation

| a | b |
| --- | --- |
| 1 | 2 |

---

Text after the rule, &amp; an entity. <b>raw</b> inline HTML.

```
an unnamed block
```

Closing words."""

# The reply's Markdown as the page shows it: every block, across the pieces it was drawn in.
BLOCKS_JS = """(el) => {
  const body = el.querySelector('.msg-body');
  if (body.querySelector('.md-pending')) return null;  // history still being drawn
  return [...body.querySelectorAll(':scope > .md-head > .md-chunk > *, :scope > .md-tail > *')]
    .map((n) => n.outerHTML).join('\\n');
}"""


# Counts the renders the Markdown worker (web/app/markdown-worker.js) answers, once its
# module has run (it sets onmessage then).
COUNT_WORKER_RENDERS = """async () => {
  while (!self.onmessage) await new Promise((r) => setTimeout(r, 5));
  const answer = self.onmessage;
  self.renders = 0;
  self.onmessage = (e) => { self.renders += 1; answer(e); };
}"""


def markdown_worker(page):
    return next((w for w in page.workers if w.url.endswith("/markdown-worker.js")), None)


# A worker that says it is ready and then never answers.
SILENT_WORKER = "self.postMessage({ ready: true }); self.onmessage = () => {};"


@pytest.mark.parametrize("worker", ["worker", "no worker", "silent worker"])
def test_a_streamed_reply_is_drawn_as_the_saved_one_is(page, setup, worker):
    """Streamed in 3-character deltas (cutting through every marker), the reply's blocks end
    up exactly as the same text drawn from history after a reload: with the live renders'
    Markdown done in the worker, without it (an engine where it cannot load), and with a
    worker that stops answering (given up after 2 s; the page renders the rest)."""
    chat = setup.chat(title="E2E markdown")
    deltas = [RICH_REPLY[i:i + 3] for i in range(0, len(RICH_REPLY), 3)]
    setup.fake.enqueue([S.delay(0.004)] + [S.text(d) for d in deltas])
    if worker == "no worker":
        page.route("**/markdown-worker.js", lambda route: route.abort())
    if worker == "silent worker":
        page.route("**/markdown-worker.js", lambda route: route.fulfill(
            status=200, content_type="text/javascript", body=SILENT_WORKER))
    open_chat(page, setup.server, chat, "E2E markdown")
    if worker != "no worker":
        # It starts in the page's first idle moment after the Markdown libraries load, which a
        # loaded 2-core machine may hold back for more than the usual 10 s.
        wait_until(lambda: markdown_worker(page), "the Markdown worker started", timeout=30)
        markdown_worker(page).evaluate(COUNT_WORKER_RENDERS)
    send(page, "Show me everything")
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "complete")
    assert setup.messages(chat)[-1]["content"] == RICH_REPLY
    expect(reply.locator("table td").last).to_have_text("2")
    live = reply.evaluate(BLOCKS_JS)
    if worker == "worker":
        assert markdown_worker(page).evaluate("self.renders") > 0
    else:  # never started, or stopped once it kept a render waiting
        wait_until(lambda: markdown_worker(page) is None, "no Markdown worker running")
    page.reload()
    wait_chat_ready(page, "E2E markdown")
    reply = replies(page).last
    expect(reply.locator(".code-wrap")).to_have_count(2)
    wait_until(lambda: reply.evaluate(BLOCKS_JS) is not None, "the history drawn")
    assert live == reply.evaluate(BLOCKS_JS)
    assert "<table>" in live and "<blockquote>" in live and "<ul>" in live and "<ol>" in live


# --- 3. reload mid-stream --------------------------------------------------------

def test_reload_mid_stream_shows_every_word_once(page, setup):
    chat = setup.chat(title="E2E reload")
    all_tokens = tokens(150)
    # Slow tokens; a pause near the end keeps the reply running however slow the machine is.
    setup.fake.enqueue([S.delay(0.02)] + [S.text(t) for t in all_tokens[:100]] + [S.hang()]
                       + [S.text(t) for t in all_tokens[100:]])
    open_chat(page, setup.server, chat, "E2E reload")
    send(page, "Count slowly")
    expect(replies(page).last.locator(".msg-body")).to_contain_text("t010")
    page.reload()  # while tokens arrive
    wait_chat_ready(page, "E2E reload")
    reply = replies(page).last
    # Still streaming after the reload (the turn belongs to the server).
    expect(reply).to_have_attribute("data-status", "streaming")
    expect(reply.locator(".msg-body")).to_contain_text("t060")
    page.reload()  # and once more, later in the same reply
    wait_chat_ready(page, "E2E reload")
    expect(replies(page).last).to_have_attribute("data-status", "streaming")
    setup.fake.wait_hanging()
    expect(replies(page).last.locator(".msg-body")).to_contain_text("t099")
    setup.fake.release()
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    content = expect_rendered_equals_stored(page, setup, chat)
    assert words(content) == words("".join(all_tokens))
    assert replies(page).count() == 1 and user_msgs(page).count() == 1


# --- 4. stop -----------------------------------------------------------------------

def test_escape_stops_and_keeps_partial_text(page, setup):
    chat = setup.chat(title="E2E stop")
    setup.fake.enqueue([S.text("Partial answer that "), S.text("stops here."), S.hang()])
    open_chat(page, setup.server, chat, "E2E stop")
    send(page, "Say something long")
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_have_text("Partial answer that stops here.")
    setup.fake.wait_hanging()
    expect(page.locator(".composer-input")).to_be_focused()
    page.keyboard.press("Escape")
    expect(reply).to_have_attribute("data-status", "cancelled")
    expect(reply.locator(".msg-meta")).to_contain_text("stopped")
    expect(reply.locator(".msg-body")).to_have_text("Partial answer that stops here.")
    expect(reply.get_by_role("button", name="Continue this reply")).to_be_visible()
    assert stored(setup, chat)[-1] == ("assistant", "Partial answer that stops here.", "cancelled")
    shot(page, "06-stopped")


# --- 5. edit -----------------------------------------------------------------------

def test_edit_a_user_message_reruns_from_it(page, setup):
    chat = setup.chat(title="E2E edit")
    setup.fake.enqueue(S.reply("Answer to the first."), S.reply("Answer to the edit."))
    open_chat(page, setup.server, chat, "E2E edit")
    send(page, "First question")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answer to the first.")
    user = user_msgs(page).last
    user.get_by_role("button", name="Edit this message").click()
    area = user.get_by_label("Edit message")
    expect(area).to_be_focused()
    expect(area).to_have_value("First question")
    area.fill("Edited question")
    shot(page, "07-editing", dark=False)
    user.get_by_role("button", name="Save & send").click()
    expect(replies(page)).to_have_count(1)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answer to the edit.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(user_msgs(page)).to_have_count(1)
    expect(user_msgs(page).last.locator(".msg-body")).to_have_text("Edited question")
    assert stored(setup, chat) == [("user", "Edited question", "complete"),
                                   ("assistant", "Answer to the edit.", "complete")]
    assert setup.fake.requests[-1].body["messages"][-1] == {"role": "user", "content": "Edited question"}


# --- 6. regenerate ---------------------------------------------------------------

def test_regenerate_replaces_the_reply(page, setup):
    chat = setup.chat(title="E2E regen")
    setup.fake.enqueue(S.reply("The first take."), S.reply("The second take."))
    open_chat(page, setup.server, chat, "E2E regen")
    send(page, "Tell me something")
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "complete")
    expect(reply.locator(".msg-body")).to_have_text("The first take.")
    reply.get_by_role("button", name="Regenerate this reply").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("The second take.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page)).to_have_count(1)
    assert stored(setup, chat) == [("user", "Tell me something", "complete"),
                                   ("assistant", "The second take.", "complete")]


# --- 7. continue after a server restart --------------------------------------------

def test_continue_after_the_server_was_killed(page, setup):
    chat = setup.chat(title="E2E restart")
    setup.fake.enqueue([S.delay(0.01)] + [S.text(t) for t in tokens(30)] + [S.hang()])
    open_chat(page, setup.server, chat, "E2E restart")
    send(page, "Write a lot")
    expect(replies(page).last.locator(".msg-body")).to_contain_text("t029")
    setup.fake.wait_hanging()
    # Partial text is committed at least once a second; wait for the commit that holds it all.
    wait_until(lambda: "t029" in (setup.messages(chat)[-1]["content"] or ""), "the partial reply is committed")
    setup.server.kill9()
    expect(page.locator(".chat-header .conn")).to_have_text(re.compile("Reconnecting|Connecting"))
    setup.server.start()  # same data dir; a new port and a new token
    setup.api = setup.server.api()
    open_chat(page, setup.server, chat, "E2E restart")
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "interrupted")
    expect(reply.locator(".msg-meta")).to_contain_text("interrupted")
    assert words(body_text(reply)) == words("".join(tokens(30)))
    cont = reply.get_by_role("button", name="Continue this reply")
    expect(cont).to_be_visible()
    shot(page, "08-interrupted")
    setup.fake.enqueue([S.text("and the rest.")])
    cont.click()
    expect(reply).to_have_attribute("data-status", "complete")
    expect(replies(page)).to_have_count(1)
    content = expect_rendered_equals_stored(page, setup, chat)
    assert content == "".join(tokens(30)) + "and the rest."


# --- 8. queue ----------------------------------------------------------------------

def test_queue_while_streaming_and_discard_one(page, setup):
    chat = setup.chat(title="E2E queue")
    setup.fake.enqueue([S.text("Working on it. "), S.hang(), S.text("Done.")], S.reply("Answer to three."))
    open_chat(page, setup.server, chat, "E2E queue")
    send(page, "one")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Working on it.")
    setup.fake.wait_hanging()
    send(page, "two")
    send(page, "three")
    chips = page.locator(".queue .queue-chip")
    expect(chips).to_have_count(2)
    expect(chips.nth(0)).to_contain_text("Queued: two")
    expect(chips.nth(1)).to_contain_text("Queued: three")
    shot(page, "09-queue")
    page.get_by_role("button", name="Remove queued message: two").click()
    expect(chips).to_have_count(1)
    expect(chips.first).to_contain_text("Queued: three")
    setup.fake.release()
    expect(page.locator(".queue")).to_be_hidden()
    expect(replies(page)).to_have_count(2)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answer to three.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    assert stored(setup, chat) == [("user", "one", "complete"),
                                   ("assistant", "Working on it. Done.", "complete"),
                                   ("user", "three", "complete"),
                                   ("assistant", "Answer to three.", "complete")]
    expect(user_msgs(page)).to_have_count(2)


# --- 9. approval ---------------------------------------------------------------------

def test_approval_card_allow_runs_the_tool(page, setup):
    chat = setup.chat(title="E2E approval")
    setup.fake.enqueue([S.tool_call(0, "call_1", "guarded", '{"text": "hi"}')],
                       S.reply("The tool echoed hi."))
    open_chat(page, setup.server, chat, "E2E approval")
    send(page, "Use the guarded tool")
    card = page.get_by_role("group", name="Approval needed for guarded")
    expect(card).to_be_visible()
    expect(card.locator("pre")).to_contain_text('"text": "hi"')
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "wait")
    expect(row.locator(".tool-state")).to_have_text("waiting for you")
    shot(page, "10-approval")
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_be_hidden()
    expect(row).to_have_attribute("data-state", "ok")
    expect(row.locator(".tool-name")).to_have_text("guarded")
    expect(row.locator(".tool-state")).to_have_text("ok")
    row.locator("summary").click()
    expect(row.locator(".tool-section").last).to_contain_text('{"echo": "hi"}')
    expect(replies(page).last.locator(".msg-body")).to_have_text("The tool echoed hi.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    shot(page, "11-tool-done")
    tool_rows = [m for m in setup.messages(chat) if m["role"] == "tool"]
    assert [m["content"] for m in tool_rows] == ['{"echo": "hi"}']


# --- 10. fallback ------------------------------------------------------------------

def test_fallback_notice_when_the_first_model_is_dead(page, setup):
    api = setup.api
    dead = api.post("/api/providers", {"kind": "openai_compatible", "name": "Dead Server",
                                       "base_url": "http://127.0.0.1:9/v1", "timeout": 5}).body
    model = api.post("/api/models", {"provider_id": dead["id"], "api_model": "dead-model", "label": "Dead",
                                     "fallbacks": [setup.model["id"]]})
    assert model.status == 201, model
    chat = setup.chat(title="E2E fallback", model_id=model.body["id"])
    setup.fake.enqueue(S.reply("The backup answers."))
    open_chat(page, setup.server, chat, "E2E fallback")
    send(page, "Anyone there?")
    notice = page.locator(".notice-slot .notice.info")
    expect(notice).to_contain_text("Dead did not answer, so Fake is answering instead.")
    expect(replies(page).last.locator(".msg-body")).to_have_text("The backup answers.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(replies(page).last.locator(".msg-meta")).to_contain_text("Fake")
    shot(page, "12-fallback")
    notice.get_by_role("button", name="Dismiss").click()
    expect(notice).to_be_hidden()


# --- 11. XSS -------------------------------------------------------------------------

XSS = """Here is some *markdown* with traps.

<img src=x onerror="window.__xss=1">

[click](javascript:window.__xss=2)

<script>window.__xss=3</script>

<svg><script>window.__xss=4</script><circle r="5" onload="window.__xss=5"/></svg>

<iframe src="data:text/html,<script>parent.__xss=6</script>"></iframe>

<a href="JaVaScRiPt:window.__xss=7">mixed case</a> and <div onclick="window.__xss=8">a div</div>

Last line.
"""


def _assert_no_active_content(page, streaming=False):
    body = replies(page).last.locator(".msg-body")
    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert body.locator("script, iframe, svg, object, embed, img").count() == 0
    assert page.locator(".thread script, .thread iframe, .thread svg").count() == 0
    handlers = page.evaluate("""() => [...document.querySelectorAll('.thread *')]
        .flatMap((el) => [...el.attributes].map((a) => a.name)).filter((n) => n.startsWith('on'))""")
    assert handlers == []
    click = body.get_by_text("click", exact=True)
    expect(click).to_have_count(1)
    assert click.get_attribute("href") is None
    if not streaming:
        mixed = body.get_by_text("mixed case", exact=True)
        assert mixed.get_attribute("href") is None
        # Nothing that points anywhere is left: the image lost its address and is not offered as a link.
        assert body.locator("a[href], a.remote-image").count() == 0
    hrefs = page.evaluate("() => [...document.querySelectorAll('.thread [href], .thread [src]')]"
                          ".map((el) => el.getAttribute('href') || el.getAttribute('src'))")
    assert not [h for h in hrefs if re.match(r"\s*(javascript|data|vbscript):", h, re.I)], hrefs


def test_model_output_cannot_run_script(page, setup):
    chat = setup.chat(title="E2E xss")
    pieces = [XSS[i:i + 7] for i in range(0, len(XSS), 7)]  # streamed in small pieces, across tags
    setup.fake.enqueue([S.text(p) for p in pieces[:len(pieces) // 2]] + [S.hang()]
                       + [S.text(p) for p in pieces[len(pieces) // 2:]])
    open_chat(page, setup.server, chat, "E2E xss")
    send(page, "Show me HTML")
    setup.fake.wait_hanging()
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_contain_text("click")
    expect(reply).to_have_attribute("data-status", "streaming")
    _assert_no_active_content(page, streaming=True)  # the streaming renderer
    setup.fake.release()
    expect(reply).to_have_attribute("data-status", "complete")
    expect(reply.locator(".msg-body")).to_contain_text("Last line.")
    _assert_no_active_content(page)  # the final render
    shot(page, "13-xss")
    page.reload()
    wait_chat_ready(page, "E2E xss")
    expect(replies(page).last.locator(".msg-body")).to_contain_text("Last line.")
    _assert_no_active_content(page)  # rendered from history


# --- 12. remote images ---------------------------------------------------------------

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


class _ImageServer:
    """A second local web server that records every request it gets."""

    def __init__(self):
        seen = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def image_server():
    srv = _ImageServer()
    yield srv
    srv.close()


def test_remote_image_is_not_fetched_until_clicked(page, context, setup, image_server):
    chat = setup.chat(title="E2E image")
    url = f"http://127.0.0.1:{image_server.port}/img.png"
    setup.fake.enqueue(S.reply(f"A picture: ![x]({url}) and a raw one <img src=\"{url}?raw\"> done."))
    asked = []
    context.on("request", lambda r: asked.append(r.url) if str(image_server.port) in r.url else None)
    open_chat(page, setup.server, chat, "E2E image")
    send(page, "Show me a picture")
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "complete")
    link = reply.locator("a.remote-image")
    expect(link).to_have_count(1)
    expect(link).to_contain_text(f"127.0.0.1:{image_server.port}")
    expect(link).to_have_attribute("href", url)
    assert reply.locator("img").count() == 0
    # Reload: history renders the same, still without fetching.
    page.reload()
    wait_chat_ready(page, "E2E image")
    expect(replies(page).last.locator("a.remote-image")).to_have_count(1)
    shot(page, "14-remote-image")
    assert image_server.requests == [] and asked == []
    # The person clicks it: it opens in a new page, which loads the image.
    with context.expect_page() as popup_info:
        replies(page).last.locator("a.remote-image").click()
    popup = popup_info.value
    popup.wait_for_load_state()
    assert popup.url == url
    assert image_server.requests[0] == "/img.png"  # (the new page may ask for /favicon.ico too)
    assert page.url.startswith(f"http://127.0.0.1:{setup.server.port}/")
