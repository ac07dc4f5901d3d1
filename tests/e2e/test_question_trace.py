"""An answered question leaves a readable trace in the thread (CONTRACT §7): each question
with the labels the person chose (not the options' values, not JSON), live and from history;
a dismissed one says it was dismissed."""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, wait_chat_ready
from tests.fakeprovider import script as S
from tests.test_protocol_questions import ITEMS  # a choice with "something else", a multi, a text

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


@pytest.fixture
def tooled(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup


def asks(items) -> list[dict]:
    return [S.text("Before I start:"), S.tool_call(0, "call_q", "ask_user", json.dumps({"items": items}))]


def trace_of(page):
    return page.locator("article.msg.assistant .question-trace")


def test_an_answered_question_shows_the_labels_chosen(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E trace")
    setup.fake.enqueue(asks(ITEMS), S.reply("PostgreSQL with sign-in and search."))
    open_chat(page, setup.server, chat, "E2E trace")
    send(page, "Set up the project")
    card = page.get_by_role("group", name="The model asks you 3 questions")
    card.get_by_role("radio", name="PostgreSQL").check()
    card.get_by_role("checkbox", name="Sign-in").check()
    card.get_by_role("checkbox", name="Search").check()
    card.get_by_role("button", name="Send answers").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("PostgreSQL with sign-in and search.")

    def check():
        trace = trace_of(page)
        expect(trace).to_be_visible()  # in the thread, not folded inside the tool row
        expect(trace.locator("dt")).to_have_text(["Which database?", "Which extras?", "Anything else?"])
        expect(trace.locator("dd")).to_have_text(["PostgreSQL", "Sign-in, Search", "(left empty)"])
        assert "pg" not in trace.inner_text().split() and "{" not in trace.inner_text()
        expect(page.locator("details.tool-call .tool-state")).to_have_text("answered")

    check()
    page.reload()  # from the saved tool result
    wait_chat_ready(page, "E2E trace")
    check()


def test_a_dismissed_question_says_it_was_dismissed(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E trace dismissed")
    setup.fake.enqueue(asks(ITEMS[:1]), S.reply("Going on without it."))
    open_chat(page, setup.server, chat, "E2E trace dismissed")
    send(page, "Go")
    card = page.get_by_role("group", name="The model asks you")
    card.get_by_role("button", name="Dismiss").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Going on without it.")
    trace = trace_of(page)
    expect(trace).to_contain_text("Which database?")
    expect(trace.locator(".question-trace-note")).to_have_text("You dismissed this question without answering.")
    row = page.locator("details.tool-call")
    expect(row.locator(".tool-state")).to_have_text("dismissed")
    expect(row).to_have_attribute("data-state", "off")  # neutral: nothing failed
