"""Long conversations in the window (CONTRACT §6, docs/UI.md "Long conversations"), in a real
Chromium against the real server and the fake provider: the context meter (typing and attaching
move it, amber near the summary threshold, red when the next message cannot fit), the
"Earlier messages summarized" divider and its summary, Summarize now, a turn's note that older
messages were left out, the request inspector and Settings → Long conversations.

Every wait is on a DOM state, a request or the fake provider's own events: no sleeps. Sizes
that must land in a level are asked of the server's own counting first (draft_at).
"""
from __future__ import annotations

import base64
import json
import os
import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in, wait_chat_ready
from tests.fakeprovider import script as S
from tests.sample_files import png

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

WINDOW, RESERVE = 2000, 200  # a model's window small enough to fill with a typed draft
MORE = "More for this chat: summarize, inspect the next request"
AMBER, RED = "rgb(138, 83, 0)", "rgb(179, 38, 30)"  # --warn and --danger in the light theme


def small_window(setup, window: int = WINDOW, reserve: int = RESERVE) -> None:
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"context_window": window, "max_output_tokens": reserve})
    assert r.status == 200, r


def turn(sock, content: str, request_id: str) -> dict:
    """One turn over the chat's socket; its turn_end."""
    sock.send(type="send", request_id=request_id, content=content)
    start = sock.until("turn_start")
    return sock.until("turn_end", turn_id=start["turn_id"])


def talk(setup, chat: str, exchanges: list[tuple[str, str]]) -> None:
    """Write the chat's history through its socket: each question answered by the fake. The
    answers carry no usage (the fake's would be made up), so the server counts for itself."""
    setup.fake.enqueue(*[[S.text(answer)] for _, answer in exchanges])
    sock = setup.socket(chat)
    try:
        for i, (question, _) in enumerate(exchanges):
            assert turn(sock, question, f"r{i}")["status"] == "completed"
    finally:
        sock.close()


def context(setup, chat: str, draft: str | None = None) -> dict:
    r = (setup.api.get(f"/api/chats/{chat}/context") if draft is None
         else setup.api.post(f"/api/chats/{chat}/context", {"draft": draft}))
    assert r.status == 200, r
    return r.body


def draft_at(setup, chat: str, tokens: int, level: str) -> str:
    """A draft that brings the next request to about `tokens`, at `level`, as the server counts."""
    words = max(1, tokens - context(setup, chat)["used_tokens"])
    for _ in range(6):
        text = "word " * words
        answer = context(setup, chat, text)
        if answer["level"] == level and abs(answer["used_tokens"] - tokens) <= 40:
            return text
        words = max(1, words + tokens - answer["used_tokens"])
    raise AssertionError(f"no draft of about {tokens} tokens at level {level}: {answer}")


def context_reads(page) -> list[tuple[str, dict | None]]:
    """Every read of …/context the page makes: (method, body)."""
    reads: list[tuple[str, dict | None]] = []

    def seen(request):
        if re.fullmatch(r"/api/chats/[^/]+/context", urlparse(request.url).path):
            reads.append((request.method, json.loads(request.post_data) if request.post_data else None))

    page.on("request", seen)
    return reads


def meter(page):
    return page.locator(".context-meter")


def label(page):
    return page.locator(".context-meter .meter-label")


def open_menu_item(page, name: str) -> None:
    page.get_by_role("button", name=MORE).click()
    page.get_by_role("menuitem", name=name).click()


def fill_colour(page) -> str:
    return page.locator(".meter-fill").evaluate("el => getComputedStyle(el).backgroundColor")


def test_the_meter_moves_with_typing_and_attaching_and_turns_amber_then_red(page, setup):
    small_window(setup)
    chat = setup.chat(title="Meter")
    talk(setup, chat, [("Hello", "Hi there.")])
    reads = context_reads(page)
    open_chat(page, setup.server, chat, "Meter")
    expect(meter(page)).to_be_visible()
    expect(label(page)).to_have_text(re.compile(r"^≈?\d+ / 2k$"))
    expect(meter(page)).to_have_attribute("data-level", "ok")
    assert reads and reads[0] == ("GET", None)

    # Typing moves it, read once after typing stops, never per keystroke.
    before = label(page).inner_text()
    typed = "a few more words to count"
    with page.expect_response(lambda r: r.url.endswith("/context") and r.request.method == "POST"
                              and json.loads(r.request.post_data)["draft"] == typed):
        page.locator(".composer-input").press_sequentially(typed, delay=20)
    expect(label(page)).not_to_have_text(before)
    posted = [body for method, body in reads if method == "POST"]
    assert 1 <= len(posted) <= 2 and len(posted) < len(typed), posted
    assert all(typed.startswith(b["draft"]) for b in posted) and posted[-1] == {"draft": typed, "file_ids": []}

    # Attaching moves it at once: the split counts the file under Attachments.
    typed_label = label(page).inner_text()
    with page.expect_request(lambda r: r.url.endswith("/context") and r.method == "POST"
                             and json.loads(r.post_data)["file_ids"]):
        page.locator(".attach-input").set_input_files(
            {"name": "notes.txt", "mimeType": "text/plain", "buffer": ("a line of notes to read\n" * 120).encode()})
    expect(label(page)).not_to_have_text(typed_label)
    meter(page).hover()
    split = page.get_by_role("group", name="What the next request carries")
    expect(split).to_be_visible()
    expect(split.locator("tbody th")).to_have_text(
        ["System prompt", "Summary of earlier messages", "Messages", "Attachments", "Tools"])
    expect(split.locator("tr[data-part=attachments] td")).not_to_have_text(re.compile(r"^≈?0$"))
    page.mouse.move(0, 0)
    expect(split).to_be_hidden()
    # Removing it takes it out of the count again.
    page.get_by_role("button", name="Remove notes.txt").click()
    expect(label(page)).to_have_text(typed_label)

    # Amber near the summary threshold (80 % of 2 000 tokens); red when the next message cannot
    # fit whatever is left out: the server refuses such a draft, and its sentence is shown.
    box = page.locator(".composer-input")
    box.fill(draft_at(setup, chat, 1700, "near"))
    expect(meter(page)).to_have_attribute("data-level", "near")
    expect(page.locator(".meter-btn")).to_have_attribute("aria-label", re.compile(r"Past 80 % of the context window"))
    expect(page.locator(".context-warning")).to_be_hidden()
    assert fill_colour(page) == AMBER
    too_long = "word " * WINDOW
    refused = setup.api.post(f"/api/chats/{chat}/context", {"draft": too_long})
    assert refused.status == 422 and refused.body["error"]["code"] == "context_too_long", refused
    box.fill(too_long)
    expect(meter(page)).to_have_attribute("data-level", "over")
    warning = page.locator(".context-warning")
    expect(warning).to_be_visible()
    expect(warning.locator("span")).to_have_text(refused.body["error"]["message"])
    expect(warning.get_by_role("button")).to_be_hidden()  # summarizing makes no room for the message itself
    assert fill_colour(page) == RED
    # A click keeps the split open, with the level's sentence; Esc closes it, focus back on the meter.
    page.locator(".meter-btn").click()
    expect(split).to_be_visible()
    expect(split.locator(".meter-level")).to_have_text(refused.body["error"]["message"])
    from tests.e2e.test_a11y import A11y, low_contrast, unnamed_controls
    assert unnamed_controls(A11y(page))[0] == []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, [".meter-label", ".context-warning > span", ".meter-level"]) == []
    page.emulate_media(color_scheme="light")
    shot(page, "context-meter-over")
    page.keyboard.press("Escape")
    expect(split).to_be_hidden()
    expect(page.locator(".meter-btn")).to_be_focused()
    # An empty box is back to the chat as it stands.
    box.fill("")
    expect(meter(page)).to_have_attribute("data-level", "ok")
    expect(warning).to_be_hidden()


def test_summarize_now_shows_progress_and_the_divider_opens_the_summary(page, setup):
    chat = setup.chat(title="Summary")
    talk(setup, chat, [("Tell me about cats", "Cats purr."), ("And dogs?", "Dogs bark."), ("Birds?", "Birds sing.")])
    open_chat(page, setup.server, chat, "Summary")
    expect(meter(page)).to_be_visible()
    expect(page.locator(".context-divider")).to_have_count(0)

    # The summary is a request to the model: parked, the action says it is under way.
    setup.fake.enqueue([S.hang(), S.text("**Cats** purr and dogs bark.")])
    with page.expect_response(lambda r: r.url.endswith("/compact")) as compacted:
        open_menu_item(page, "Summarize now")
        setup.fake.wait_hanging()
        page.get_by_role("button", name=MORE).click()
        expect(page.get_by_role("menuitem", name="Stop summarizing")).to_be_enabled()
        page.keyboard.press("Escape")
        expect(page.get_by_role("button", name=MORE)).to_be_focused()
        setup.fake.release()
    assert compacted.value.status == 200
    boundary = compacted.value.json()["boundary_message_id"]
    expect(page.locator(".toast")).to_contain_text("Earlier messages summarized:")
    # The divider follows the boundary message's bubble and opens the summary, as Markdown.
    divider = page.locator(".context-divider")
    expect(divider).to_have_count(1)
    assert divider.evaluate("el => el.previousElementSibling.dataset.id") == str(boundary)
    toggle = divider.get_by_role("button", name="Earlier messages summarized")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(divider.locator(".summary-text")).to_have_text("Cats purr and dogs bark.")
    expect(divider.locator(".summary-text strong")).to_have_text("Cats")
    # The meter counts the summary; the messages themselves are all still there.
    meter(page).hover()
    expect(page.locator("tr[data-part=summary] td")).not_to_have_text(re.compile(r"^≈?0$"))
    expect(page.locator("article.msg.user")).to_have_count(3)
    from tests.e2e.test_a11y import A11y, low_contrast, unnamed_controls
    assert unnamed_controls(A11y(page))[0] == []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, [".summary-toggle", ".summary-panel .hint", ".summary-text p"]) == []
    page.emulate_media(color_scheme="light")
    shot(page, "context-divider", dark=False)

    # Nothing new to summarize: the server's sentence, and nothing changes.
    r = setup.api.post(f"/api/chats/{chat}/compact")
    assert r.status == 422, r
    open_menu_item(page, "Summarize now")
    expect(page.locator(".toast").filter(has_text=r.body["error"]["message"])).to_be_visible()
    expect(divider).to_have_count(1)

    # A reload draws it again from the chat's context.
    page.reload()
    wait_chat_ready(page, "Summary")
    expect(page.locator(".context-divider")).to_have_count(1)
    page.get_by_role("button", name="Earlier messages summarized").click()
    expect(page.locator(".summary-text")).to_have_text("Cats purr and dogs bark.")


def test_a_summary_under_way_can_be_stopped_and_changes_nothing(page, setup):
    chat = setup.chat(title="Stop it")
    talk(setup, chat, [("Tell me about cats", "Cats purr."), ("And dogs?", "Dogs bark."), ("Birds?", "Birds sing.")])
    open_chat(page, setup.server, chat, "Stop it")
    expect(meter(page)).to_be_visible()
    for how in ("menu", "meter"):
        setup.fake.enqueue([S.hang(), S.text("A summary that never comes.")])
        with page.expect_response(lambda r: r.url.endswith("/compact")) as compacted:
            open_menu_item(page, "Summarize now")
            setup.fake.wait_hanging()
            if how == "menu":
                open_menu_item(page, "Stop summarizing")
            else:
                meter(page).click()
                page.locator(".meter-panel").get_by_role("button", name="Stop summarizing").click()
        assert compacted.value.status == 409 and compacted.value.json()["error"]["code"] == "cancelled"
        setup.fake.release()
        expect(page.locator(".toast").filter(has_text="The summary was stopped").last).to_be_visible()
        expect(page.locator(".context-divider")).to_have_count(0)
        page.keyboard.press("Escape")
    # Nothing was summarized: a reload draws no divider, and every message is there.
    page.reload()
    wait_chat_ready(page, "Stop it")
    expect(page.locator("article.msg.user")).to_have_count(3)
    expect(page.locator(".context-divider")).to_have_count(0)


def long_history(setup, chat: str, n: int = 3, words: int = 300) -> None:
    """n long exchanges, written while the model's window is large."""
    talk(setup, chat, [(f"Question {i}: " + "word " * words, f"Answer {i}: " + "word " * words) for i in range(n)])


def test_a_turn_that_summarizes_first_draws_the_divider_as_it_happens(page, setup):
    chat = setup.chat(title="Auto")
    long_history(setup, chat)
    small_window(setup)
    open_chat(page, setup.server, chat, "Auto")
    # The turn's first request is the summary, then the reply.
    setup.fake.enqueue(S.reply("A summary of three long questions."), S.reply("Fresh answer."))
    send(page, "One more")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Fresh answer.")
    divider = page.locator(".context-divider")
    expect(divider).to_have_count(1)
    divider.get_by_role("button", name="Earlier messages summarized").click()
    expect(divider.locator(".summary-text")).to_have_text("A summary of three long questions.")
    expect(meter(page)).to_have_attribute("data-level", "ok")
    # No messages were left out without a summary.
    expect(page.locator(".context-note")).to_have_count(0)


def test_a_turn_that_leaves_messages_out_says_how_many(page, setup):
    r = setup.api.patch("/api/settings", {"compaction": {"auto": False}})
    assert r.status == 200, r
    chat = setup.chat(title="Trim")
    long_history(setup, chat)
    small_window(setup)
    omitted: list[dict] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: omitted.append(json.loads(p))
                                          if isinstance(p, str) and '"context_trimmed"' in p else None))
    open_chat(page, setup.server, chat, "Trim")
    setup.fake.enqueue(S.reply("Answer without the start."))
    send(page, "What now?")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answer without the start.")
    assert len(omitted) == 1, omitted
    n = omitted[0]["messages_omitted"]
    assert n >= 2
    note = page.locator(".context-note")
    expect(note).to_have_text(f"{n} earlier messages were left out to fit the model's context window.")
    expect(note).to_have_attribute("role", "status")
    from tests.e2e.test_a11y import low_contrast
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, [".context-note"]) == []
    page.emulate_media(color_scheme="light")
    # In its turn: after the message it answered, before the reply.
    assert note.evaluate("el => el.previousElementSibling.classList.contains('user')")
    assert note.evaluate("el => el.nextElementSibling.classList.contains('assistant')")
    # The model was sent the newest messages only: the oldest question is not in its request.
    sent = json.dumps(setup.fake.requests[-1].body["messages"])
    assert "Question 0" not in sent and "What now?" in sent
    # A reload replays the last turn, and its note with it.
    page.reload()
    wait_chat_ready(page, "Trim")
    expect(page.locator(".context-note")).to_have_text(
        f"{n} earlier messages were left out to fit the model's context window.")


def test_a_summary_that_fails_says_why_messages_were_left_out(page, setup):
    chat = setup.chat(title="Fallback")
    long_history(setup, chat)
    small_window(setup)
    open_chat(page, setup.server, chat, "Fallback")
    setup.fake.enqueue([S.error(500)], S.reply("Answered anyway."))
    send(page, "Go on")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Answered anyway.")
    note = page.locator(".context-note")
    expect(note).to_have_text(re.compile(r"^\d+ earlier messages? (was|were) left out to fit the model's context "
                                         r"window\. \S.+"))
    expect(page.locator(".context-divider")).to_have_count(0)


def test_the_inspector_shows_the_next_request_without_secrets_or_image_bytes(page, setup):
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"vision": True}})
    assert r.status == 200, r
    chat = setup.chat(title="Inspect", system_prompt="Answer briefly, <b>kindly</b>.")
    image = png(4, 4)
    up = setup.api.upload("dot.png", image, content_type="image/png")
    assert up.status == 201, up
    setup.fake.enqueue(S.reply("A red dot."))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="What is this?", attachments=[up.body["id"]])
    sock.until("turn_end")
    sock.close()
    open_chat(page, setup.server, chat, "Inspect")
    open_menu_item(page, "Inspect request…")
    sheet = page.get_by_role("dialog", name="Next request")
    expect(sheet).to_be_visible()
    expect(sheet.locator(".inspect-status")).to_have_text(re.compile(r"^[\d,]+ tokens in all, without your next message\.$"))
    facts = sheet.locator(".inspect-facts dd")
    expect(facts).to_have_text(["Chat Completions", "fake-model", f"{setup.fake.base_url}/chat/completions"])
    expect(sheet.locator(".inspect-section").first.locator("pre")).to_have_text("Answer briefly, <b>kindly</b>.")
    expect(sheet.locator(".inspect-section").first.locator("b")).to_have_count(0)
    messages = sheet.locator(".inspect-message")
    expect(messages).to_have_count(2)
    expect(messages.locator(".role-name")).to_have_text(["user", "assistant"])
    expect(messages.first.locator(".inspect-role")).to_contain_text(re.compile(r"\d+ tokens"))
    expect(messages.first.locator("pre")).to_contain_text(re.compile(r"What is this\?\n\[image/png, \d+ bytes, sha256 \w+"))
    expect(messages.nth(1).locator("pre")).to_have_text("A red dot.")
    params = sheet.locator(".inspect-params")
    expect(params).to_contain_text("stream")
    text = sheet.inner_text()
    sheet.locator(".inspect-raw summary").click()
    raw = sheet.locator(".inspect-raw pre").inner_text()
    for shown in (text, raw):
        assert "sk-test-not-real" not in shown
        assert base64.b64encode(image).decode()[:24] not in shown
    assert json.loads(raw)["model"] == "fake-model"
    from tests.e2e.test_a11y import A11y, assert_modal_dialog
    assert_modal_dialog(A11y(page), "Next request")
    shot(page, "context-inspector")
    page.keyboard.press("Escape")
    expect(sheet).to_have_count(0)


def test_long_conversations_settings_are_saved_and_shown(page, setup):
    sign_in(page, setup.server, "/settings/conversations")
    section = page.locator("#settings-conversations")
    expect(section.get_by_role("heading", name="Long conversations")).to_be_visible()
    auto = section.get_by_label("Summarize older messages automatically")
    slider = section.get_by_label(re.compile("Summarize when the context window is"))
    model = section.get_by_label("Summary model")
    expect(auto).to_be_checked()
    expect(slider).to_have_value("80")
    expect(section.locator("output")).to_have_text("80 %")
    expect(model).to_have_value("")

    def saved() -> dict:
        return setup.api.get("/api/settings").body["compaction"]

    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        auto.uncheck()
    assert saved()["auto"] is False
    # By keyboard, in steps of 5 %, the focus staying on the slider as each step is saved.
    slider.focus()
    for _ in range(3):
        with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
            page.keyboard.press("ArrowLeft")
    expect(section.locator("output")).to_have_text("65 %")
    expect(slider).to_be_focused()
    assert saved()["threshold"] == pytest.approx(0.65)
    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        page.keyboard.press("End")
    expect(section.locator("output")).to_have_text("95 %")
    with page.expect_response(lambda r: r.url.endswith("/api/settings") and r.request.method == "PATCH"):
        model.select_option(label="Fake")
    assert saved() == {"auto": False, "threshold": pytest.approx(0.95), "model_id": setup.model["id"]}
    page.reload()
    expect(auto).not_to_be_checked()
    expect(slider).to_have_value("95")
    expect(model).to_have_value(setup.model["id"])
    from tests.e2e.test_a11y import A11y, unnamed_controls
    assert unnamed_controls(A11y(page))[0] == []
