"""Images the model draws (CONTRACT §11, §13) through the real server: the fake provider's model calls
`image_generate`, and Numi draws through loopback fakes of the OpenAI images API (driven by the `openai`
SDK) and of Automatic1111's `sdapi` (tests/fake_images.py). The bytes are saved and served, the `image`
event and the message's `images` say so, partial images stream first; what is offered when, and
Stop. Hostile answers: tests/test_images_hostile.py; settings, discovery, export and import:
tests/test_images_settings.py."""
from __future__ import annotations

import io
import json
import time

from PIL import Image

from tests.fake_images import OPENAI_PATH, SDAPI_PATH
from tests.images_helpers import IMAGES_KEY, Drawing, drawing, ended, images, picture  # noqa: F401 (drawing, images: fixtures)


def step_message(drawing: Drawing, chat: str, call_id: str = "c1") -> dict:
    """The assistant message whose step called image_generate."""
    return next(m for m in drawing.setup.messages(chat)
                if m["role"] == "assistant" and any(c["id"] == call_id for c in m["tool_calls"]))


def offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools", [])}


# --- the OpenAI images API --------------------------------------------------------------------

def test_a_drawn_image_is_saved_served_announced_and_kept_on_its_message(drawing):
    final = picture(640, 480)
    drawing.use_openai("gpt-image-1")
    drawing.answer("openai", png=final, stream=False)  # a server that answers JSON even when asked to stream
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    prompt = "A red fox asleep in fresh snow, watercolour"
    end = drawing.turn(sock, "r1", {"prompt": prompt, "size": "640x480"})
    assert end["status"] == "completed"
    assert not sock.of("approval_required")  # runs without asking (CONTRACT §11)

    (asked,) = drawing.images.of(OPENAI_PATH)
    assert asked.headers["authorization"] == f"Bearer {IMAGES_KEY}"  # the provider's key, from the key store
    assert asked.body == {"model": "gpt-image-1", "prompt": prompt, "size": "640x480", "stream": True,
                          "partial_images": 2}  # a GPT image model: no response_format, partials asked for

    (image,) = sock.of("image")
    message = step_message(drawing, chat)
    assert image == {**image, "message_id": message["id"], "prompt": prompt, "width": 640, "height": 480,
                     "call_id": "c1", "model": "gpt-image-1", "backend": "openai"}
    tool_end = ended(sock)
    assert tool_end["ok"] and image["file_id"] in tool_end["output"]
    kinds = [e["type"] for e in sock.events]
    assert kinds.index("tool_start") < kinds.index("image") < kinds.index("tool_end")
    assert message["images"] == [{"file_id": image["file_id"], "prompt": prompt, "width": 640, "height": 480,
                                  "model": "gpt-image-1", "backend": "openai",
                                  "thumbnail_file_id": image["thumbnail_file_id"]}]
    assert all(m["images"] == [] for m in drawing.setup.messages(chat) if m["role"] == "assistant" and m is not message
               and m["id"] != message["id"])

    served = drawing.api.get(f"/api/files/{image['file_id']}")
    assert served.status == 200 and served.body == final
    assert served.headers["Content-Type"] == "image/png"
    assert served.headers["Content-Disposition"].startswith("inline")
    thumb = drawing.api.get(f"/api/files/{image['thumbnail_file_id']}")
    assert thumb.status == 200 and thumb.headers["Content-Type"] == "image/webp"
    with Image.open(io.BytesIO(thumb.body)) as small:
        assert small.format == "WEBP" and small.size == (512, 384)


def test_partial_images_come_as_they_stream_then_the_final_one(drawing):
    partials = [picture(96, 96), picture(160, 160)]
    final = picture(256, 256)
    drawing.use_openai("gpt-image-1")
    drawing.answer("openai", png=final, partials=partials)
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    assert drawing.turn(sock, "r1", {"prompt": "a lighthouse at dusk"})["status"] == "completed"

    shown = sock.of("image_partial")
    assert [(e["index"], e["width"], e["height"], e["call_id"]) for e in shown] == [(0, 96, 96, "c1"),
                                                                                   (1, 160, 160, "c1")]
    for event, data in zip(shown, partials):
        r = drawing.api.get(event["url"])
        assert r.status == 200 and r.body == data and r.headers["Content-Type"] == "image/png"
    (image,) = sock.of("image")
    assert image["message_id"] == shown[0]["message_id"]
    kinds = [e["type"] for e in sock.events]
    assert kinds.index("image_partial") < kinds.index("image")
    assert drawing.api.get(f"/api/files/{image['file_id']}").body == final
    assert "thumbnail_file_id" not in image  # 256 px: it is its own thumbnail
    # A partial is no file of the chat: only the final image is on the message.
    assert [i["file_id"] for i in step_message(drawing, chat)["images"]] == [image["file_id"]]
    assert drawing.api.get("/api/images/partials/ip_000000000000000000000000").status == 404


def test_dall_e_is_asked_for_base64_and_a_link_on_the_providers_own_address_is_read(drawing):
    final = picture(300, 200, "JPEG")
    drawing.use_openai("dall-e-3", size="1024x1024")
    drawing.answer("openai", png=final, url="self")  # a server that answers a url all the same
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    assert drawing.turn(sock, "r1", {"prompt": "a teapot"})["status"] == "completed"
    (asked,) = drawing.images.of(OPENAI_PATH)
    assert asked.body == {"model": "dall-e-3", "prompt": "a teapot", "size": "1024x1024",
                          "response_format": "b64_json"}
    (fetched,) = [r for r in drawing.images.requests if r.method == "GET"]
    assert "authorization" not in fetched.headers  # the key goes to the API, not to a link it answered
    (image,) = sock.of("image")
    served = drawing.api.get(f"/api/files/{image['file_id']}")
    assert served.body == final and served.headers["Content-Type"] == "image/jpeg"
    assert (image["width"], image["height"], image["model"]) == (300, 200, "dall-e-3")


def test_a_link_to_another_address_is_refused_and_never_read(drawing):
    drawing.use_openai("dall-e-3")
    elsewhere = f"http://localhost:{drawing.images.port}/files/image-0.png"  # another origin, this computer
    drawing.answer("openai", png=picture(64, 64), url=elsewhere)
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    before = drawing.blobs()
    assert drawing.turn(sock, "r1", {"prompt": "a cat"})["status"] == "completed"
    end = ended(sock)
    assert not end["ok"]
    assert "link to the image on http://localhost:" in end["output"] and "never from another host" in end["output"]
    assert not [r for r in drawing.images.requests if r.method == "GET"]
    assert not sock.of("image") and drawing.blobs() == before
    assert step_message(drawing, chat)["images"] == []


# --- sdapi ----------------------------------------------------------------------------------------

def test_sdapi_draws_at_the_settings_size_and_names_the_checkpoint_that_drew(drawing):
    final = picture(768, 512)
    drawing.use_sdapi(size="768x512")
    drawing.answer("sdapi", png=final)
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    assert drawing.turn(sock, "r1", {"prompt": "an orchard in spring"})["status"] == "completed"
    (asked,) = drawing.images.of(SDAPI_PATH)
    assert asked.body == {"prompt": "an orchard in spring", "width": 768, "height": 512, "batch_size": 1,
                          "n_iter": 1, "send_images": True, "save_images": False}
    (image,) = sock.of("image")
    assert (image["width"], image["height"], image["model"], image["backend"]) == (768, 512, "fake-sd15", "sdapi")
    assert drawing.api.get(f"/api/files/{image['file_id']}").body == final
    assert step_message(drawing, chat)["images"][0]["model"] == "fake-sd15"

    # A model named in Settings → Images is the checkpoint asked for, and the one said to draw;
    # the call's own size wins over the setting's.
    drawing.use_sdapi(model="dreamshaper_8")
    assert drawing.turn(sock, "r2", {"prompt": "a pear", "size": "512x640"}, call_id="c2")["status"] == "completed"
    asked = drawing.images.of(SDAPI_PATH)[-1]
    assert asked.body["override_settings"] == {"sd_model_checkpoint": "dreamshaper_8"}
    assert (asked.body["width"], asked.body["height"]) == (512, 640)
    assert sock.of("image")[-1]["model"] == "dreamshaper_8"


# --- what is offered, and Stop ----------------------------------------------------------------------

def test_image_generate_is_offered_only_with_a_backend_that_can_draw_and_a_model_that_calls_tools(drawing):
    setup = drawing.setup
    chat = setup.chat(title="t")
    sock = setup.socket(chat)

    def ask(request_id: str) -> set[str]:
        setup.fake.enqueue([{"type": "text", "text": "ok"}])
        sock.send(type="send", request_id=request_id, content="hi")
        sock.until("turn_end", turn_id=sock.until("turn_start")["turn_id"])
        return offered(setup.fake.requests[-1])

    assert "image_generate" not in ask("r1")  # no backend (the default)
    drawing.use_sdapi()
    assert "image_generate" in ask("r2")
    drawing.use_openai()
    assert "image_generate" in ask("r3")
    assert drawing.api.patch(f"/api/providers/{drawing.provider_id}", {"enabled": False}).status == 200
    shown = drawing.api.get("/api/settings").body["images"]
    assert shown["problem"].startswith("Fake Images is turned off.")
    assert "image_generate" not in ask("r4")
    assert drawing.api.patch(f"/api/providers/{drawing.provider_id}", {"enabled": True}).status == 200
    assert drawing.api.get("/api/settings").body["images"]["problem"] is None
    # OpenAI's own API without its key draws nothing: not offered.
    r = drawing.api.post("/api/providers", {"kind": "openai", "name": "OpenAI", "base_url": drawing.images.base_url})
    drawing.use_openai(provider_id=r.body["id"])
    assert drawing.api.get("/api/settings").body["images"]["problem"].startswith("OpenAI has no API key.")
    assert "image_generate" not in ask("r5")
    assert drawing.api.put(f"/api/providers/{r.body['id']}/key", {"api_key": "sk-openai-test"}).status == 204
    assert "image_generate" in ask("r6")
    # A model that calls no tools gets none.
    assert drawing.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": False}}).status == 200
    assert "image_generate" not in ask("r7")
    # The settings screens list it with the other tools.
    listed = drawing.api.get(f"/api/chats/{chat}/tools").body
    assert "image_generate" in json.dumps(listed)


def test_stop_ends_a_drawing_at_once_and_keeps_nothing(drawing):
    drawing.use_openai("gpt-image-1")
    drawing.answer("openai", hang=True)
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    before = drawing.blobs()
    drawing.setup.fake.enqueue([{"type": "tool_call", "index": 0, "id": "c1", "name": "image_generate",
                                 "arguments": json.dumps({"prompt": "a slow painting"})}])
    sock.send(type="send", request_id="r1", content="draw")
    turn_id = sock.until("turn_start")["turn_id"]
    sock.until("tool_start", turn_id=turn_id)
    drawing.images.wait_requests(OPENAI_PATH, 1)
    started = time.monotonic()
    sock.send(type="stop")
    assert sock.until("turn_end", turn_id=turn_id)["status"] == "cancelled"
    assert time.monotonic() - started < 10
    assert not sock.of("image") and drawing.blobs() == before
