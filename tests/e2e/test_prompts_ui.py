"""The prompt library in a real Chromium against the real server (CONTRACT §12, issue 36): Settings → Prompts
starts empty with a sentence on how to add one, makes a prompt (a bad command refused beside its field, a
clashing one refused by the server), shows what it asks for, searches, edits and deletes (asked first); in a
chat, `/` at the start of the message box lists the prompts filtered as the person types, ↑/↓ move, Esc
closes, Tab and Enter choose; a prompt with {{variables}} asks for each in a small form (Tab between fields,
Enter fills them in) and the box holds the result, its text as text, nothing sent.

One page load: the chat is reached by its address's hash. Every wait is on a DOM state (Playwright's
auto-waiting `expect`)."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, shot, sign_in, wait_chat_ready

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

TRANSLATE = "Translate {{text}} into {{ language }}, keeping <b>its</b> tone; {{text}} once more."
BUG = "Steps:\n1. <img src=x onerror=\"window.__pwned=1\">\nExpected:\nActual:"


def test_settings_make_prompts_and_the_composer_fills_one_in(page, setup):
    chat = setup.chat(title="Prompt chat")
    sign_in(page, setup.server, "/settings/prompts")
    s = page.locator("section.s-panel[data-section='prompts']")
    expect(s.get_by_role("heading", name="Prompts", exact=True)).to_be_visible()
    expect(s.locator(".pr-empty")).to_contain_text("No prompts yet. Make one below")
    expect(s.locator(".pr-item")).to_have_count(0)

    # The form is open while the list is empty; a command the server would refuse is said beside it.
    name, command, text = s.get_by_label("Name", exact=True), s.get_by_label("Command"), s.get_by_label("Text")
    save = s.get_by_role("button", name="Save prompt")
    name.fill("Translate")
    command.fill("Translate it")
    text.fill(TRANSLATE)
    expect(s.locator(".pr-create .pr-asks")).to_have_text("Asks for: text, language")
    save.click()
    expect(command).to_have_attribute("aria-invalid", "true")
    expect(command).to_be_focused()
    expect(s.locator(".pr-create .field-error").nth(1)).to_contain_text("lowercase letters")
    command.fill("tr")
    save.click()
    expect(s.locator(".pr-create .form-status")).to_have_text("Saved “Translate”: type /tr in the message box to use it.")
    expect(s.locator(".pr-empty")).to_be_hidden()
    item = s.locator(".pr-item")
    expect(item).to_have_count(1)
    expect(item.locator(".pr-name")).to_have_text("Translate")
    expect(item.locator(".pr-command")).to_have_text("/tr")
    expect(item.locator(".pr-asks")).to_have_text("Asks for: text, language")
    expect(item.locator(".pr-preview")).to_have_text(TRANSLATE)  # markup in it is text
    assert item.locator(".pr-preview b").count() == 0

    # The server refuses a command already in use: said on the field, nothing made.
    name.fill("Translate formally")
    command.fill("tr")
    text.fill("Formally: {{text}}")
    save.click()
    expect(command).to_have_attribute("aria-invalid", "true")
    expect(s.locator(".pr-create .field-error").nth(1)).to_contain_text("already has the command /tr")
    command.fill("tr-formal")
    save.click()
    expect(item).to_have_count(2)
    expect(s.locator(".pr-name")).to_have_text(["Translate", "Translate formally"])  # by name

    # Search, then edit one in place and delete it (asked first).
    search = s.get_by_role("searchbox", name="Search prompts")
    search.fill("formal")
    expect(s.locator(".pr-name")).to_have_text(["Translate formally"])
    search.fill("zzz")
    expect(s.locator(".pr-empty")).to_have_text("No prompt matches “zzz”.")
    search.fill("")
    expect(item).to_have_count(2)
    s.get_by_role("button", name="Edit Translate formally").click()
    formal = s.get_by_role("form", name="Edit Translate formally")
    expect(formal.get_by_label("Name", exact=True)).to_be_focused()
    formal.get_by_label("Name", exact=True).fill("Formal translation")
    formal.get_by_role("button", name="Save").click()
    expect(s.locator(".pr-name")).to_have_text(["Formal translation", "Translate"])
    assert {p["name"] for p in setup.api.get("/api/prompts").body["items"]} == {"Formal translation", "Translate"}
    s.get_by_role("button", name="Delete Formal translation").click()
    page.get_by_role("button", name="Delete prompt").click()
    expect(s.locator(".pr-name")).to_have_text(["Translate"])
    shot(page, "prompts-01-settings")

    # One made elsewhere meanwhile: the message box's list reads the library each time it opens.
    assert setup.api.post("/api/prompts", {"name": "Bug report", "command": "bug", "content": BUG}).status == 201
    page.goto(f"http://127.0.0.1:{setup.server.port}/#/c/{chat}")
    wait_chat_ready(page, "Prompt chat")
    box = page.get_by_role("textbox", name="Message")
    menu = page.locator(".prompt-menu")
    options = menu.get_by_role("option")
    box.click()
    box.press("/")
    expect(menu).to_be_visible()
    expect(options).to_have_count(2)
    expect(options.locator(".prompt-command")).to_have_text(["/bug", "/tr"])  # by name
    expect(options.first).to_have_attribute("aria-selected", "true")
    box.press_sequentially("t")
    expect(options.locator(".prompt-command")).to_have_text(["/tr", "/bug"])  # the command first, then "Steps…"
    box.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", options.nth(1).get_attribute("id"))
    shot(page, "prompts-02-list")
    box.press("ArrowDown")  # round to the top
    expect(options.first).to_have_attribute("aria-selected", "true")
    box.press("Escape")
    expect(menu).to_be_hidden()
    expect(box).to_have_value("/t")
    expect(box).to_be_focused()

    # A slash later in the text opens nothing; the box emptied, / opens it again, filtered as typed.
    box.fill("see /bu")
    expect(menu).to_be_hidden()
    box.fill("")
    box.press_sequentially("/bu")
    expect(options.locator(".prompt-command")).to_have_text(["/bug"])
    expect(options.first.locator(".prompt-preview")).to_contain_text('Steps: 1. <img src=x onerror="window.__pwned=1">')
    box.press("Tab")  # no variables: the box holds its text, as text
    expect(menu).to_be_hidden()
    expect(box).to_have_value(BUG)
    expect(box).to_be_focused()
    expect(page.locator(".prompt-vars")).to_be_hidden()

    # A prompt with variables: Enter chooses it, a form asks for each (Tab between), Enter fills them in.
    box.fill("")
    box.press_sequentially("/tr")
    expect(options.locator(".prompt-command")).to_have_text(["/tr"])
    box.press("Enter")
    form = page.get_by_role("form", name="Fill in “Translate”")
    expect(form).to_be_visible()
    expect(box).to_have_value(TRANSLATE)
    first, second = form.get_by_label("text", exact=True), form.get_by_label("language", exact=True)
    expect(first).to_be_focused()
    first.press_sequentially("hola $& {{language}}")
    first.press("Tab")
    expect(second).to_be_focused()
    second.press_sequentially("English")
    shot(page, "prompts-03-variables")
    second.press("Enter")
    expect(form).to_be_hidden()
    expect(box).to_have_value("Translate hola $& {{language}} into English, keeping <b>its</b> tone; "
                              "hola $& {{language}} once more.")
    expect(box).to_be_focused()
    shot(page, "prompts-04-filled")
    # Nothing was sent, and nothing any prompt holds became markup.
    assert setup.messages(chat) == []
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".composer b, .composer img").count() == 0

    # Esc in the form leaves the placeholders for the person to fill by hand.
    box.fill("")
    box.press_sequentially("/tr")
    expect(options).to_have_count(1)
    box.press("Enter")
    expect(form).to_be_visible()
    page.keyboard.press("Escape")
    expect(form).to_be_hidden()
    expect(box).to_have_value(TRANSLATE)
    expect(box).to_be_focused()
    assert re.search(r"\{\{text\}\}", box.input_value())
