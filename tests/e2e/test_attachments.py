"""Attachments in a real Chromium: the paperclip's file chooser, paste, drop, chips
with previews and ✕, errors as sentences, and the sent message's thumbnails.

Waits are on DOM states (Playwright's auto-waiting `expect`) and on the fake
provider's recorded requests; no sleeps.
"""
from __future__ import annotations

import base64
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, shot
from tests.fakeprovider import script as S
from tests.sample_files import png

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


def vision_chat(setup, title: str) -> str:
    """A chat on a model of the fake provider that is marked as seeing images."""
    r = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-vision",
                                       "label": "Fake Vision", "supports": {"vision": True}})
    assert r.status == 201, r
    return setup.chat(title=title, model_id=r.body["id"])


def choose_files(page, *files: dict) -> None:
    """Click the paperclip and answer the browser's file chooser."""
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files(list(files))


def chips(page):
    return page.locator(".composer .attach-chip")


def dispatch_with_file(page, selector: str, event: str, name: str, mime: str, data: bytes) -> None:
    """Fire a real paste/drop event carrying a file, as the browser does for the clipboard or a drag."""
    page.evaluate("""([selector, event, name, mime, b64]) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], name, { type: mime }));
        const target = document.querySelector(selector);
        const init = { bubbles: true, cancelable: true };
        if (event === "paste") {
          target.dispatchEvent(new ClipboardEvent("paste", { ...init, clipboardData: data }));
        } else {
          for (const type of ["dragenter", "dragover", "drop"]) {
            target.dispatchEvent(new DragEvent(type, { ...init, dataTransfer: data }));
          }
        }
    }""", [selector, event, name, mime, base64.b64encode(data).decode()])


def test_attach_by_chooser_send_and_see_the_thumbnail(page, setup):
    chat = vision_chat(setup, "E2E attach")
    image = png(24, 16, (30, 120, 220))
    open_chat(page, setup.server, chat, "E2E attach")
    choose_files(page, {"name": "blue.png", "mimeType": "image/png", "buffer": image})
    chip = chips(page).first
    expect(chip).to_have_attribute("data-state", "ready")
    expect(chip.locator(".attach-name")).to_have_text("blue.png")
    expect(chip.locator(".attach-size")).to_have_text("90 bytes" if len(image) == 90 else re.compile(r"\d"))
    expect(chip.locator("img.attach-thumb")).to_have_attribute("src", re.compile(r"^blob:"))
    shot(page, "attach-01-chip")

    setup.fake.enqueue([S.text("A blue rectangle.")])
    box = page.locator(".composer-input")
    box.fill("What is this?")
    box.press("Enter")
    expect(page.locator("article.msg.assistant").last).to_have_attribute("data-status", "complete")
    expect(chips(page)).to_have_count(0)  # sent: the composer is empty again

    (request,) = setup.fake.requests
    parts = request.body["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "What is this?"}
    assert parts[1] == {"type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + base64.b64encode(image).decode()}}

    # The sent message shows the image, served by the files route (CSP img-src 'self').
    (saved,) = [m for m in setup.messages(chat) if m["role"] == "user"]
    file_id = saved["attachments"][0]["id"]
    thumb = page.locator("article.msg.user .msg-thumb")
    expect(thumb).to_have_attribute("src", f"/api/files/{file_id}")
    expect(thumb).to_have_attribute("alt", "blue.png")
    page.wait_for_function("img => img.complete && img.naturalWidth === 24", arg=thumb.element_handle())
    expect(page.locator("article.msg.user .msg-body")).to_have_text("What is this?")
    shot(page, "attach-02-sent")

    # And after a reload, from the saved history.
    page.reload()
    expect(page.locator("article.msg.user .msg-thumb")).to_have_attribute("src", f"/api/files/{file_id}")


def test_paste_an_image_remove_a_chip_and_send_the_rest(page, setup):
    chat = vision_chat(setup, "E2E paste")
    open_chat(page, setup.server, chat, "E2E paste")
    dispatch_with_file(page, ".composer-input", "paste", "image.png", "image/png", png())
    expect(chips(page)).to_have_count(1)
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    expect(chips(page).first.locator("img.attach-thumb")).to_be_visible()
    choose_files(page, {"name": "notes.md", "mimeType": "text/markdown", "buffer": b"# Notes\n\nremember this\n"})
    expect(chips(page)).to_have_count(2)
    notes = chips(page).filter(has_text="notes.md")
    expect(notes).to_have_attribute("data-state", "ready")
    expect(notes.locator(".attach-icon")).to_be_visible()  # no thumbnail for text

    page.get_by_role("button", name="Remove image.png").click()
    expect(chips(page)).to_have_count(1)
    expect(chips(page).first).to_contain_text("notes.md")

    setup.fake.enqueue([S.text("Noted.")])
    page.locator(".composer-input").press("Enter")  # files alone may be sent, without text
    expect(page.locator("article.msg.assistant").last).to_have_attribute("data-status", "complete")
    (request,) = setup.fake.requests
    content = request.body["messages"][-1]["content"]
    assert isinstance(content, str)  # the removed image never left: no image part at all
    assert '<attachment name="notes.md" type="text/markdown"' in content and "remember this" in content
    user = page.locator("article.msg.user").last
    expect(user.locator(".msg-file")).to_have_count(1)
    expect(user.locator(".msg-file")).to_contain_text("notes.md")
    expect(user.locator(".msg-body")).to_be_hidden()  # no empty bubble for a message of files only


def test_drop_a_file_on_the_chat(page, setup):
    chat = setup.chat(title="E2E drop")
    open_chat(page, setup.server, chat, "E2E drop")
    dispatch_with_file(page, ".scroller", "drop", "data.csv", "text/csv", b"a,b\n1,2\n")
    expect(chips(page)).to_have_count(1)
    expect(chips(page).first).to_have_attribute("data-state", "ready")
    expect(chips(page).first).to_contain_text("data.csv")


def test_too_big_and_unreadable_files_are_refused_with_a_sentence(page, start_server, fake):
    from tests.conftest import Setup

    setup = Setup(start_server({"NUMI_MAX_FILE_MB": "0.01"}), fake)  # about 10 KB
    chat = setup.chat(title="E2E refused")
    open_chat(page, setup.server, chat, "E2E refused")
    choose_files(page, {"name": "huge.txt", "mimeType": "text/plain", "buffer": b"x" * 20_000})
    chip = chips(page).first
    expect(chip).to_have_attribute("data-state", "error")
    alert = page.locator(".composer .attach-error")
    expect(alert).to_have_attribute("role", "alert")
    expect(alert).to_contain_text("huge.txt was not attached. The file is larger than 10.2 KB")
    page.get_by_role("button", name="Remove huge.txt").click()
    expect(chips(page)).to_have_count(0)

    choose_files(page, {"name": "archive.bin", "mimeType": "application/octet-stream",
                        "buffer": bytes(range(256)) * 8})
    expect(chips(page).first).to_have_attribute("data-state", "error")
    expect(alert).to_contain_text("archive.bin cannot be sent")
    shot(page, "attach-03-refused", dark=False)

    # The refused file is not sent with the message; the message still goes.
    setup.fake.enqueue([S.text("Fine.")])
    box = page.locator(".composer-input")
    box.fill("Just text then")
    box.press("Enter")
    expect(page.locator("article.msg.assistant").last).to_have_attribute("data-status", "complete")
    (request,) = setup.fake.requests
    assert request.body["messages"][-1] == {"role": "user", "content": "Just text then"}
    assert [m["attachments"] for m in setup.messages(chat) if m["role"] == "user"] == [[]]
