"""The question card (CONTRACT §7) in a real Chromium against the real server and the fake
provider's scripted `ask_user` calls: answered from the keyboard alone (digits pick, the
box beside "Something else…", Enter sends), a choice left unanswered said inline, Esc
dismissing it without stopping the reply, the card back after a reload, the model's text
shown as text, and the chat list's "asks you a question" mark.

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or the server's saved
state: no sleeps.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, wait_chat_ready
from tests.fakeprovider import script as S
from tests.test_protocol_questions import ITEMS  # a choice with "something else", a multi, a text

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

@pytest.fixture
def tooled(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup


def asks(items) -> list[dict]:
    return [S.text("Before I start:"), S.tool_call(0, "call_q", "ask_user", json.dumps({"items": items}))]


def result_sent(setup) -> dict:
    sent = setup.fake.requests[-1].body["messages"][-1]
    assert sent["role"] == "tool" and sent["tool_call_id"] == "call_q"
    return json.loads(sent["content"])


def assert_named_and_readable(page) -> None:
    """The checks of test_a11y.py: every control named, and the card's text readable in both themes."""
    from tests.e2e.test_a11y import A11y, assert_structure, low_contrast

    assert_structure(A11y(page))
    bad = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        bad += [f"{scheme}: {x}" for x in low_contrast(page, [".question-card .field-error", ".question-option kbd",
                                                                ".question-keys", ".question-item legend",
                                                                ".mark.attention"])]
    page.emulate_media(color_scheme="light")
    assert bad == []


def test_a_question_answered_from_the_keyboard_reaches_the_model(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E question")
    setup.fake.enqueue(asks(ITEMS), S.reply("MariaDB with search, then."))
    open_chat(page, setup.server, chat, "E2E question")
    send(page, "Set up the project")

    card = page.get_by_role("group", name="The model asks you 3 questions")
    expect(card).to_be_visible()
    db = card.get_by_role("group", name="Which database?")
    # Keyboard first: the card takes the focus from the (empty) message box.
    expect(db.get_by_role("radio", name="PostgreSQL")).to_be_focused()
    expect(page.locator("details.tool-call")).to_have_attribute("data-state", "wait")
    item = page.locator(f".chat-item[data-id='{chat}']")
    expect(item.get_by_role("img", name="asks you a question")).to_be_visible()
    shot(page, "questions-01-card")

    # Enter with no database picked: said inline, nothing sent.
    page.keyboard.press("Enter")
    expect(card.get_by_role("alert").filter(has_text="Pick an answer to “Which database?”.")).to_be_visible()
    assert not [m for m in setup.messages(chat) if m["role"] == "tool"]
    assert_named_and_readable(page)

    page.keyboard.press("2")
    expect(db.get_by_role("radio", name="SQLite")).to_be_checked()
    expect(card.get_by_role("alert").filter(has_text="Pick an answer")).to_have_count(0)  # picked: no longer true
    page.keyboard.press("3")  # the row after the options: Something else…, and its box
    expect(db.get_by_role("radio", name="Something else…")).to_be_checked()
    other = db.get_by_role("textbox", name="Your own answer to: Which database?")
    expect(other).to_be_focused()
    page.keyboard.type("MariaDB 11")  # digits typed into a box are text, not picks
    expect(other).to_have_value("MariaDB 11")
    expect(db.get_by_role("radio", name="Something else…")).to_be_checked()

    page.keyboard.press("Tab")
    extras = card.get_by_role("group", name="Which extras?")
    expect(extras.get_by_role("checkbox", name="Sign-in")).to_be_focused()
    for key in ("1", "2", "1"):
        page.keyboard.press(key)
    expect(extras.get_by_role("checkbox", name="Sign-in")).not_to_be_checked()
    expect(extras.get_by_role("checkbox", name="Search")).to_be_checked()
    notes = card.get_by_role("textbox", name="Anything else?")
    notes.focus()
    page.keyboard.type("Keep it small")
    page.keyboard.press("Shift+Enter")  # a new line, not Send
    page.keyboard.type("please")
    shot(page, "questions-02-answered")
    page.keyboard.press("Enter")

    expect(card).to_be_hidden()
    expect(replies(page).last.locator(".msg-body")).to_have_text("MariaDB with search, then.")
    expect(page.locator("details.tool-call")).to_have_attribute("data-state", "ok")
    expect(item.get_by_role("img", name="asks you a question")).to_have_count(0)
    assert result_sent(setup) == {"status": "answered", "answers": [
        {"key": "db", "question": "Which database?", "answer": "MariaDB 11", "in_their_own_words": True},
        {"key": "extras", "question": "Which extras?", "answer": ["search"]},
        {"key": "notes", "question": "Anything else?", "answer": "Keep it small\nplease"},
    ]}


def test_a_reload_brings_the_card_back_and_esc_dismisses_it_without_stopping(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E dismiss")
    tricky = [{"key": "go", "prompt": "<img src=x onerror=alert(1)> Go <b>ahead</b>?", "kind": "choice",
               "options": [{"value": "yes", "label": "<i>Yes</i>"}, {"value": "no", "label": "No"}]}]
    setup.fake.enqueue(asks(tricky), S.reply("Going ahead without an answer."))
    open_chat(page, setup.server, chat, "E2E dismiss")
    send(page, "Go")
    card = page.get_by_role("group", name="The model asks you")
    expect(card).to_be_visible()

    page.reload()  # the socket resumes and the waiting question is sent again
    wait_chat_ready(page, "E2E dismiss")
    expect(card).to_be_visible()
    # The model's words are shown as it wrote them, never as markup.
    expect(card.locator("legend")).to_have_text("<img src=x onerror=alert(1)> Go <b>ahead</b>?")
    expect(card.get_by_role("radio", name="<i>Yes</i>")).to_be_visible()
    assert card.locator("img, b, i").count() == 0
    expect(card.get_by_role("radio", name="<i>Yes</i>")).to_be_focused()
    page.keyboard.press("Escape")

    expect(card).to_be_hidden()
    reply = replies(page).last
    expect(reply.locator(".msg-body")).to_have_text("Going ahead without an answer.")
    expect(reply).to_have_attribute("data-status", "complete")  # Esc dismissed; it did not stop the reply
    assert result_sent(setup)["status"] == "dismissed"


def test_the_time_limit_is_a_setting_and_the_card_says_it(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E limit")
    open_chat(page, setup.server, chat, "E2E limit")
    page.goto(f"{page.url.split('#')[0]}#/settings/tools")
    limit = page.get_by_label("Questions from the model wait")
    expect(limit).to_have_value("")  # until answered: no limit unless the person sets one
    limit.select_option(label="15 minutes")
    expect(page.locator(".toast").filter(has_text="Unanswered questions now end")).to_be_visible()
    assert setup.api.get("/api/settings").body["questions"] == {"timeout_s": 900}

    setup.fake.enqueue(asks(ITEMS[2:]), S.reply("ok"))
    page.goto(f"{page.url.split('#')[0]}#/c/{chat}")
    wait_chat_ready(page, "E2E limit")
    send(page, "Ask me")
    card = page.get_by_role("group", name="The model asks you")
    expect(card.locator(".question-limit")).to_have_text(re.compile(r"goes on in about 15 minutes"))
    card.get_by_role("button", name="Send answers").click()
    expect(card).to_be_hidden()
    expect(replies(page).last.locator(".msg-body")).to_have_text("ok")
    assert result_sent(setup)["answers"] == [{"key": "notes", "question": "Anything else?", "answer": ""}]
