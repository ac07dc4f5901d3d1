"""What a model cannot do, said before it bites: an image for a model without vision, a workspace
chat on a model with tools off, and a refused tool call naming the setting — in a real Chromium."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_attachments import chips, choose_files
from tests.e2e.ui import CHROMIUM, open_chat, send, wait_chat_ready
from tests.fakeprovider import script as S
from tests.sample_files import png

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


def add_seeing_model(setup) -> dict:
    """A model that sees images beside the fixture's, so a chat on the fixture's can switch to it."""
    r = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-vision",
                                       "label": "Fake Vision", "supports": {"vision": True}})
    assert r.status == 201, r
    return r.body


def test_vision_failure_shows_once_with_one_retry(page, setup):
    add_seeing_model(setup)
    chat = setup.chat(title="E2E no vision")  # the fixture's model is not marked as seeing images
    open_chat(page, setup.server, chat, "E2E no vision")
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": png()})
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    send(page, "What is in this picture?")
    expect(page.locator("article.msg.assistant")).to_have_count(1)
    # The failed reply says it, with Retry; no second copy in a notice under it (a screen
    # reader still hears it once, from the notice slot's hidden live region).
    reply_error = page.locator("article.msg.assistant .msg-error")
    expect(reply_error).to_contain_text("Fake cannot see images")
    expect(page.locator(".notice-slot .notice")).to_have_count(0)
    expect(page.locator(".notice-slot [role=alert]")).to_contain_text("cannot see images")
    # One way to ask again, not Retry beside Regenerate beside "with another model…".
    bar = page.locator("article.msg.assistant .msg-actions")
    expect(bar.get_by_role("button")).to_have_text(["Retry"])


def test_an_image_for_a_model_without_vision_warns_at_once_with_switch_model(page, setup):
    add_seeing_model(setup)
    chat = setup.chat(title="E2E warn vision")
    open_chat(page, setup.server, chat, "E2E warn vision")
    warning = page.locator(".composer .caps-warning")
    expect(warning).to_be_hidden()
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": png()})
    # Said as soon as the image is attached, before anything is sent.
    expect(warning).to_contain_text("Fake cannot see images, so blue.png would not reach it")
    assert not [r for r in setup.fake.requests if r.path.endswith("/chat/completions")]
    page.get_by_role("button", name="Switch model").click()
    # It opens the composer's model picker, ready to type in.
    expect(page.locator(".composer .model-search")).to_be_focused()
    page.keyboard.press("Escape")
    # The model that sees images: the warning goes.
    page.reload()
    # The picker is opened once the page is whole again: a click on the button the first
    # paint shows can be undone by the composer drawn after the models arrive.
    wait_chat_ready(page, "E2E warn vision")
    expect(page.locator(".composer .model-picker-btn .model-name")).to_have_text("Fake")
    page.locator(".composer .model-picker-btn").click()
    page.locator(".composer .model-search").fill("vision")
    page.locator(".composer .model-search").press("Enter")
    expect(page.locator(".composer .model-picker-btn .model-name")).to_have_text("Fake Vision")
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": png()})
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    expect(warning).to_be_hidden()


def test_a_workspace_chat_on_a_model_with_tools_off_says_so_with_the_setting(page, setup, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    chat = setup.chat(title="E2E tools off")
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(folder)}).status == 200
    open_chat(page, setup.server, chat, "E2E tools off")
    warning = page.locator(".composer .caps-warning")
    expect(warning).to_contain_text("Fake has tools off, so it cannot use this chat's workspace")
    link = warning.get_by_role("link", name="turn them on")
    expect(link).to_have_attribute("href", "#/settings/models")
    # Tools on: the sentence goes (the catalog change reaches the open page).
    setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}})
    page.reload()
    expect(page.locator(".chat-header .conn")).to_have_text("")
    expect(warning).to_be_hidden()


def test_a_refused_tool_call_names_the_setting_and_the_model_shows_tools_off(page, setup, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}})
    chat = setup.chat(title="E2E tools refused")
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(folder)}).status == 200
    open_chat(page, setup.server, chat, "E2E tools refused")
    warning = page.locator(".composer .caps-warning")
    expect(warning).to_be_hidden()
    setup.fake.enqueue([S.error(400, {"error": {"message": "registry.ollama.ai/library/fake does not support tools"}})])
    send(page, "List the files")
    reply_error = page.locator("article.msg.assistant .msg-error")
    expect(reply_error).to_contain_text("Settings → Models → Fake → Tools")
    expect(page.locator(".notice-slot .notice")).to_have_count(0)
    # The catalog now says tools are off, and the composer says so before the next send.
    page.reload()
    expect(warning).to_contain_text("Fake has tools off")
    expect(warning).to_contain_text("Tools off: Fake Local refused tool definitions")
    # Its link leads to the model's card in Settings, which says it too, by the tools switch.
    warning.get_by_role("link", name="turn them on").click()
    card = page.locator(".card.model", has_text="Fake")
    expect(card.locator(".model-note")).to_contain_text("Tools off: Fake Local refused tool definitions")
    expect(card.get_by_label("tools")).not_to_be_checked()
