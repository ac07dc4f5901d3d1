"""Images in a real Chromium (CONTRACT §13) against the real server, the fake provider and the loopback
image servers (tests/fake_images.py): Settings → Images chosen in the page (a provider's image models
listed, the server's refusal said under its field, nothing saved until it is right); an image the model
draws with image_generate shown in its reply with its prompt and model as caption (as text, never
markup), opened in the viewer (the file at full size; Escape and Close close it, focus goes back) with a
Download of the file itself, and still there after a reload; a drawing's newest preview shown until its
image comes; the composer's Image action held back with its reason until a backend is set, reached by
keyboard, and sending the message to be drawn.

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or on the server's saved state; the
preview is held on screen by holding the chat socket's frames from the image on (the page's own socket,
routed through Playwright), never by a sleep.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, sign_in, wait_chat_ready
from tests.fake_images import SDAPI_PATH
from tests.fakeprovider import script as S
from tests.images_helpers import Drawing, drawing, images, picture  # noqa: F401 (drawing, images: fixtures)

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

NO_BACKEND = "Choose an image backend in Settings → Images"
# A prompt that would be markup (and a script) if the page ever made it so.
PROMPT = 'A <b>red</b> fox asleep in fresh snow <img src=x onerror="window.__owned=1">'
PROMPT_FILE = "a-b-red-b-fox-asleep-in-fresh"  # the server's name for it: its first eight words


def record_frames(page) -> list[dict]:
    """Every frame the page sends on its sockets, parsed (attach before the chat opens)."""
    sent: list[dict] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda p: sent.append(json.loads(p)) if isinstance(p, str) else None))
    return sent


def saved_images(setup) -> dict:
    r = setup.api.get("/api/settings")
    assert r.status == 200, r
    return r.body["images"]


def drawn(setup, chat: str) -> dict:
    """The one image the chat's messages carry."""
    (item,) = [i for m in setup.messages(chat) if m["role"] == "assistant" for i in m["images"]]
    return item


def test_images_are_set_in_settings_then_a_drawn_image_shows_opens_downloads_and_stays(page, drawing):
    setup = drawing.setup
    setup.fake.models = ["fake-model", "gpt-image-1", "dall-e-3"]  # Fake Local lists two image models
    sign_in(page, setup.server, "/settings/images")
    section = page.get_by_role("region", name="Images", exact=True)
    backend = section.get_by_label("Image backend")
    expect(backend).to_have_value("")
    expect(section.get_by_label("Provider")).to_be_hidden()

    # OpenAI images API: the provider's image models are listed for the model field.
    backend.select_option(label="OpenAI images API")
    provider = section.get_by_label("Provider")
    expect(provider.locator("option")).to_have_text(["— choose a provider —", "Fake Local", "Fake Images"])
    provider.select_option(label="Fake Local")
    listed = section.locator("#set-img-models-status")
    expect(listed).to_contain_text("It lists 2 image models: gpt-image-1, dall-e-3.")
    expect(section.locator("#set-img-models option")).to_have_count(2)
    # A server that lists nothing says why, and the name can still be typed.
    provider.select_option(label="Fake Images")
    expect(listed).to_contain_text("You can still type the model's name.")
    expect(section.locator("#set-img-models option")).to_have_count(0)
    section.get_by_label("Model", exact=True).fill("gpt-image-1")

    # The server's refusal is said under its field, and nothing is saved.
    size = section.get_by_label("Default size")
    size.fill("huge")
    section.get_by_role("button", name="Save").click()
    expect(section.locator("#set-img-size-err")).to_contain_text('Must be a size like "1024x1024"')
    expect(size).to_have_attribute("aria-invalid", "true")
    expect(size).to_be_focused()
    assert saved_images(setup)["backend"] is None
    size.fill("640x480")
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".form-status")).to_have_text("Saved.")
    expect(section.locator("#set-img-size-err")).to_have_text("")
    assert saved_images(setup) == {"backend": "openai", "provider_id": drawing.provider_id, "model": "gpt-image-1",
                                   "url": None, "size": "640x480", "problem": None}
    shot(page, "images-01-settings")

    # The model draws: the picture in its reply, its prompt and model as caption, as text.
    final = picture(640, 480)
    drawing.answer("openai", png=final, stream=False)
    setup.fake.enqueue([S.tool_call(0, "c1", "image_generate", json.dumps({"prompt": PROMPT}))],
                       [S.text("Here is the fox.")])
    chat = setup.chat(title="E2E images")
    open_chat(page, setup.server, chat, "E2E images")
    send(page, "Draw a fox.")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Here is the fox.")
    item = drawn(setup, chat)
    assert (item["width"], item["height"], item["model"]) == (640, 480, "gpt-image-1") and item["thumbnail_file_id"]
    figure = page.locator("article.msg.assistant .msg-image")
    expect(figure).to_have_count(1)
    expect(figure.locator(".msg-image-prompt")).to_have_text(PROMPT)
    expect(figure.locator(".msg-image-by")).to_have_text("drawn by gpt-image-1")
    thumb = figure.locator("img")
    expect(thumb).to_have_attribute("src", f"/api/files/{item['thumbnail_file_id']}")  # over 512 px: its thumbnail
    expect(thumb).to_have_attribute("alt", PROMPT)
    expect(thumb).to_have_js_property("naturalWidth", 512)  # loaded, and it is the thumbnail
    expect(figure.locator("b, figcaption img")).to_have_count(0)
    assert page.evaluate("window.__owned") is None
    shot(page, "images-02-reply")

    # The viewer: the file at full size, its prompt, who drew it, Download.
    opener = figure.get_by_role("button", name=PROMPT)
    opener.click()
    viewer = page.get_by_role("dialog", name="Image")
    expect(viewer).to_be_visible()
    big = viewer.locator("img.image-viewer-img")
    expect(big).to_have_attribute("src", f"/api/files/{item['file_id']}")
    expect(big).to_have_attribute("alt", PROMPT)
    expect(big).to_have_js_property("naturalWidth", 640)
    expect(viewer.locator(".image-viewer-prompt")).to_have_text(PROMPT)
    expect(viewer).to_contain_text("Drawn by gpt-image-1 · 640 × 480 px")
    download = viewer.get_by_role("link", name="Download")
    expect(download).to_have_attribute("href", f"/api/files/{item['file_id']}")
    expect(download).to_have_attribute("download", PROMPT_FILE)
    shot(page, "images-03-viewer")
    with page.expect_download() as got:
        download.click()
    assert got.value.suggested_filename == f"{PROMPT_FILE}.png"
    assert Path(got.value.path()).read_bytes() == final
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(opener).to_be_focused()
    # By keyboard, and closed by its Close button.
    opener.press("Enter")
    expect(viewer).to_be_visible()
    viewer.get_by_role("button", name="Close").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(opener).to_be_focused()

    # Read back from the history after a reload: the same picture and caption.
    page.reload()
    wait_chat_ready(page, "E2E images")
    again = page.locator("article.msg.assistant .msg-image")
    expect(again).to_have_count(1)
    expect(again.locator("img")).to_have_attribute("src", f"/api/files/{item['thumbnail_file_id']}")
    expect(again.locator(".msg-image-by")).to_have_text("drawn by gpt-image-1")

    # Its provider turned off: Settings → Images says why nothing is drawn; None turns images off.
    assert setup.api.patch(f"/api/providers/{drawing.provider_id}", {"enabled": False}).status == 200
    sign_in(page, setup.server, "/settings/images")
    expect(section.locator(".images-state")).to_contain_text("Fake Images is turned off.")
    expect(section.get_by_label("Provider")).to_have_value(drawing.provider_id)
    expect(section.get_by_label("Provider").locator("option:checked")).to_have_text("Fake Images (turned off)")
    section.get_by_label("Image backend").select_option(label="None")
    expect(section.get_by_label("Model", exact=True)).to_be_hidden()
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".form-status")).to_have_text("Saved: images are off.")
    expect(section.locator(".images-state")).to_be_hidden()
    assert saved_images(setup)["backend"] is None


def hold_from_the_image(page) -> tuple[list[dict], Callable[[], None]]:
    """Route the chat socket through the test: frames pass until the first `image` event, which and
    everything after it wait (in order) until `release()`. Returns the frames passed, and release."""
    passed: list[dict] = []
    held: list[str] = []
    route: dict = {}

    def handler(ws):
        server = ws.connect_to_server()
        route["ws"] = ws

        def from_server(message):
            event = json.loads(message) if isinstance(message, str) else {}
            # Once released everything passes, an image that had not come yet included.
            if not route.get("released") and (held or event.get("type") == "image"):
                held.append(message)
                return
            passed.append(event)
            ws.send(message)

        server.on_message(from_server)

    def release():
        route["released"] = True
        while held:  # in order; what comes after goes straight through
            route["ws"].send(held.pop(0))

    page.route_web_socket(re.compile(r"/ws/c_[0-9a-f]+(\?|$)"), handler)
    return passed, release


def test_a_drawing_shows_its_newest_preview_until_its_image_comes(page, drawing):
    setup = drawing.setup
    drawing.use_openai("gpt-image-1")
    final = picture(640, 480)
    drawing.answer("openai", png=final, partials=[picture(96, 96), picture(160, 160)])
    setup.fake.enqueue([S.tool_call(0, "c1", "image_generate", json.dumps({"prompt": "A lighthouse"}))],
                       [S.text("Done.")])
    chat = setup.chat(title="E2E preview")
    passed, release = hold_from_the_image(page)
    open_chat(page, setup.server, chat, "E2E preview")
    send(page, "Draw a lighthouse.")
    preview = page.locator("article.msg.assistant .msg-image.partial")
    expect(preview).to_have_count(1)
    expect(preview.locator("img")).to_have_js_property("naturalWidth", 160)  # the newest of the two
    partials = [e for e in passed if e.get("type") == "image_partial"]
    assert [e["index"] for e in partials] == [0, 1]
    expect(preview.locator("img")).to_have_attribute("src", partials[-1]["url"])
    expect(preview.locator("img")).to_have_attribute("alt", "A preview of the image being drawn")
    expect(preview).to_have_attribute("aria-busy", "true")
    expect(preview.locator("figcaption")).to_have_text("Drawing…")
    expect(page.locator("article.msg.assistant .msg-image:not(.partial)")).to_have_count(0)

    release()
    image = page.locator("article.msg.assistant .msg-image")
    expect(image).to_have_count(1)
    expect(image).not_to_have_class(re.compile("partial"))
    expect(image.locator(".msg-image-prompt")).to_have_text("A lighthouse")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done.")


def test_the_image_action_waits_for_a_backend_then_sends_the_message_to_be_drawn(page, drawing):
    setup = drawing.setup
    chat = setup.chat(title="E2E image action")
    frames = record_frames(page)
    open_chat(page, setup.server, chat, "E2E image action")
    button = page.get_by_role("button", name="Image: draw what the message describes")
    box = page.locator(".composer-input")
    expect(button).to_have_attribute("aria-disabled", "true")
    expect(button).to_have_attribute("title", NO_BACKEND)

    # Held back but reachable: Tab from the message box gets there, and Enter says why.
    box.fill("A lighthouse at dusk")
    box.focus()
    for _ in range(4):
        page.keyboard.press("Tab")
        if button.evaluate("el => el === document.activeElement"):
            break
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".composer .attach-error")).to_have_text(f"{NO_BACKEND}.")
    expect(box).to_have_value("A lighthouse at dusk")
    assert not [f for f in frames if f.get("type") == "send"]

    # A Stable Diffusion server chosen in Settings → Images.
    page.goto(f"http://127.0.0.1:{setup.server.port}/#/settings/images")
    section = page.get_by_role("region", name="Images", exact=True)
    section.get_by_label("Image backend").select_option(label="Stable Diffusion (sdapi)")
    expect(section.get_by_label("Provider")).to_be_hidden()
    section.get_by_label("Server address").fill(drawing.images.url)
    section.get_by_label("Default size").fill("320x240")
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".form-status")).to_have_text("Saved.")
    assert saved_images(setup) == {"backend": "sdapi", "provider_id": None, "model": None, "url": drawing.images.url,
                                   "size": "320x240", "problem": None}
    drawing.answer("sdapi", png=picture(320, 240))

    page.goto(f"http://127.0.0.1:{setup.server.port}/#/c/{chat}")
    wait_chat_ready(page, "E2E image action")
    expect(button).to_have_attribute("aria-disabled", "false")
    expect(button).not_to_have_attribute("title", NO_BACKEND)
    # Nothing to draw yet: it says so and sends nothing.
    box.fill("")
    button.click()
    expect(page.locator(".composer .attach-error")).to_have_text(
        "Describe the picture you want in the message box, then press Image.")
    assert not [f for f in frames if f.get("type") == "send"]

    box.fill("A lighthouse at dusk")
    button.focus()
    page.keyboard.press("Enter")
    reply = replies(page).last
    figure = reply.locator(".msg-image")
    expect(figure.locator(".msg-image-prompt")).to_have_text("A lighthouse at dusk")
    expect(figure.locator(".msg-image-by")).to_have_text("drawn by fake-sd15")
    expect(box).to_have_value("")
    (sent,) = [f for f in frames if f.get("type") == "send"]
    assert sent["image"] is True and sent["content"] == "A lighthouse at dusk"
    assert "research" not in sent and "mode" not in sent
    item = drawn(setup, chat)
    assert "thumbnail_file_id" not in item  # 320 px: it is its own thumbnail
    expect(figure.locator("img")).to_have_attribute("src", f"/api/files/{item['file_id']}")
    (asked,) = drawing.images.of(SDAPI_PATH)
    assert (asked.body["prompt"], asked.body["width"], asked.body["height"]) == ("A lighthouse at dusk", 320, 240)
    assert not setup.fake.requests  # the chat model was never asked
    shot(page, "images-04-image-action")
