"""The model picker by the composer, "Regenerate with…", ↑ to edit the last message and
Ctrl+Shift+C to copy the last reply, in a real Chromium against the fake provider."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def add_models(setup) -> tuple[dict, dict]:
    """A second provider (same fake) with a vision+reasoning model, and a tools model on the first."""
    api = setup.api
    other = api.post("/api/providers", {"kind": "openai_compatible", "name": "Second Fake",
                                        "base_url": setup.fake.base_url, "api_key": "sk-test-not-real"}).body
    seer = api.post("/api/models", {"provider_id": other["id"], "api_model": "fake-seer", "label": "Seer",
                                    "supports": {"tools": False, "vision": True, "reasoning": True}}).body
    tooly = api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-tooly", "label": "Tooly",
                                     "supports": {"tools": True, "vision": False, "reasoning": False}}).body
    assert "id" in seer and "id" in tooly, (seer, tooly)
    return seer, tooly


def picker(page):
    return page.locator(".composer .model-picker")


def options(page):
    return picker(page).get_by_role("option")


def last_request_model(setup, text: str) -> str:
    bodies = [r.body for r in setup.fake.requests
              if r.body and r.body.get("messages") and r.body["messages"][-1].get("content") == text]
    assert bodies, f"no request asked {text!r}"
    return bodies[-1]["model"]


def test_picker_lists_filters_orders_by_recent_and_sets_the_chats_model(page, setup):
    seer, tooly = add_models(setup)
    chat = setup.chat(title="Picking")
    open_chat(page, setup.server, chat, "Picking")
    button = picker(page).get_by_role("button", name="Model for this chat: Fake")
    expect(button).to_be_visible()
    # The one control for the chat's model: the header has none of its own.
    expect(page.get_by_label(re.compile("^Model for this chat"))).to_have_count(1)

    button.click()
    search = picker(page).get_by_role("combobox", name="Search models")
    expect(search).to_be_focused()
    expect(options(page)).to_have_count(3)
    # Each option: the model, its provider, and an SVG icon per capability it has.
    seer_opt = options(page).filter(has_text="Seer")
    expect(seer_opt.locator(".model-provider")).to_have_text("Second Fake")
    expect(seer_opt.locator("svg.cap-icon")).to_have_count(2)
    expect(seer_opt.locator(".cap")).to_have_text(["Vision", "Reasoning"])
    expect(options(page).filter(has_text="Tooly").locator(".cap")).to_have_text(["Tools"])
    expect(options(page).filter(has_text="Tooly").locator(".model-provider")).to_have_text("Fake Local")

    # Search as you type: by name or by provider.
    search.fill("second")
    expect(options(page)).to_have_count(1)
    expect(options(page)).to_contain_text("Seer")
    search.fill("")
    expect(options(page)).to_have_count(3)

    # Keyboard: the chat's model is the active option; ↓ moves, Enter picks.
    expect(search).to_have_attribute("aria-activedescendant", options(page).nth(0).get_attribute("id"))
    search.press("ArrowDown")  # Seer (configured order: Fake, Seer, Tooly)
    expect(options(page).nth(1)).to_have_class("model-option active")
    search.press("Enter")
    expect(search).to_be_hidden()
    # Back to writing, with the new model shown.
    expect(page.locator(".composer-input")).to_be_focused()
    expect(picker(page).get_by_role("button", name="Model for this chat: Seer")).to_be_visible()
    wait_until(lambda: setup.api.get(f"/api/chats/{chat}").body["model_id"] == seer["id"],
               "the chat's model is Seer")

    # The next message goes to the picked model.
    setup.fake.enqueue(S.reply("Seen."))
    send(page, "What do you see?")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Seen.")
    assert last_request_model(setup, "What do you see?") == "fake-seer"

    # Recently used first: Seer, then the rest in their order; Esc closes and refocuses.
    picker(page).get_by_role("button", name="Model for this chat: Seer").click()
    expect(options(page).locator(".model-option-name")).to_have_text(["Seer", "Fake", "Tooly"])
    expect(options(page).first).to_have_attribute("aria-selected", "true")
    search.press("Escape")
    expect(search).to_be_hidden()
    expect(picker(page).get_by_role("button", name="Model for this chat: Seer")).to_be_focused()


def test_new_chat_screen_picker_sets_the_model_of_the_chat_it_creates(page, setup):
    seer, _ = add_models(setup)
    assert setup.api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    sign_in(page, setup.server)
    picker(page).get_by_role("button", name="Model for this chat: Fake").click()
    options(page).filter(has_text="Seer").click()
    expect(picker(page).get_by_role("button", name="Model for this chat: Seer")).to_be_visible()
    setup.fake.enqueue(S.reply("Fresh."))
    send(page, "Start here")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Fresh.")
    assert last_request_model(setup, "Start here") == "fake-seer"
    chat_id = page.url.rsplit("/", 1)[-1]
    assert setup.api.get(f"/api/chats/{chat_id}").body["model_id"] == seer["id"]


def test_regenerate_with_answers_with_the_chosen_model(page, setup):
    _, tooly = add_models(setup)
    chat = setup.chat(title="Again")
    open_chat(page, setup.server, chat, "Again")
    # A long first answer: its actions sit at the bottom of the window.
    setup.fake.enqueue(S.reply("First try.\n\n" + "More.\n\n" * 30))
    send(page, "Say it")
    reply = replies(page).last
    expect(reply.locator(".msg-body p")).to_have_count(31)

    setup.fake.enqueue(S.reply("Second try."))
    reply.hover()
    reply.get_by_role("button", name="Regenerate with another model").click()
    search = reply.get_by_role("combobox", name="Search models")
    expect(search).to_be_focused()
    # The last reply sits at the window's bottom: its list opens upwards, in view.
    expect(reply.get_by_role("listbox", name="Models")).to_be_in_viewport(ratio=1)
    search.fill("tooly")
    search.press("Enter")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Second try.")
    assert last_request_model(setup, "Say it") == "fake-tooly"
    # Only that reply: the chat keeps its model.
    assert setup.api.get(f"/api/chats/{chat}").body["model_id"] == setup.model["id"]


def test_up_in_the_empty_box_edits_the_last_message_and_ctrl_shift_c_copies_the_last_reply(page, context, setup):
    chat = setup.chat(title="Keys")
    base = f"http://127.0.0.1:{setup.server.port}"
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    open_chat(page, setup.server, chat, "Keys")
    setup.fake.enqueue(S.reply("One."), S.reply("Two, **bold**."))
    send(page, "first")
    expect(replies(page).last.locator(".msg-body")).to_have_text("One.")
    send(page, "second")
    expect(replies(page)).to_have_count(2)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Two, bold.")

    box = page.locator(".composer-input")
    # Text in the box: ↑ moves the caret as usual, nothing opens.
    box.fill("draft")
    box.press("ArrowUp")
    expect(page.get_by_role("textbox", name="Edit message")).to_have_count(0)
    box.fill("")
    # Once the reply has ended: a message cannot be edited while its reply runs.
    expect(page.get_by_role("article", name="You").last.get_by_role("button", name="Edit this message")).to_be_visible()
    box.press("ArrowUp")
    editor = page.get_by_role("textbox", name="Edit message")
    expect(editor).to_be_focused()
    expect(editor).to_have_value("second")
    expect(page.locator("article.msg.user").last.locator(".editor")).to_have_count(1)
    editor.press("Escape")
    expect(editor).to_have_count(0)

    box.focus()
    box.press("Control+Shift+C")
    expect(page.locator(".toast")).to_contain_text("Copied the last reply.")
    assert page.evaluate("navigator.clipboard.readText()") == "Two, **bold**."
    # The shortcut is listed with the others.
    page.locator("body").press("Escape")
    page.locator(".messages").click()
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_contain_text("Copy the last reply")
    expect(sheet).to_contain_text("edit your last message")


def test_open_picker_is_named_and_readable(page, setup):
    from tests.e2e.test_a11y import A11y, low_contrast, unnamed_controls

    add_models(setup)
    sign_in(page, setup.server)
    # No chat model and no default yet: the button asks for one.
    picker(page).get_by_role("button", name="Model for this chat").click()
    expect(picker(page).get_by_role("button", name="Model for this chat")).to_have_text("Choose a model")
    search = picker(page).get_by_role("combobox", name="Search models")
    expect(search).to_be_focused()
    shot(page, "model-picker-open")
    problems, tree = unnamed_controls(A11y(page))
    assert problems == []
    listbox = [n for n in tree.exposed() if tree.role(n) == "listbox"]
    assert [tree.name(n) for n in listbox] == ["Models"]
    names = [tree.name(n) for n in tree.exposed() if tree.role(n) == "option"]
    # An option is read with its provider and what it can do.
    assert "Seer Second Fake Vision Reasoning" in [" ".join(x.split()) for x in names], names
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, [".model-option.active .model-provider", ".model-option-name",
                                   ".model-picker-btn .model-name", ".model-search::placeholder"]) == []
