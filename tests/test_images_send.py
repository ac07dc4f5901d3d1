"""A `send` with `image: true` (CONTRACT §4, §13) through the real server: the message's words are drawn by
the image backend Settings → Images chose (loopback fakes of the OpenAI images API and of Automatic1111's
`sdapi`, tests/fake_images.py), the reply carries the image, and the chat model is never asked (the fake
provider's request log stays empty). Stop while drawing, hostile answers, no backend, bad frames and a
repeated request_id."""
from __future__ import annotations

import time

import pytest

from tests.fake_images import OPENAI_PATH, SDAPI_PATH
from tests.fakeprovider import script as S
from tests.images_helpers import Drawing, drawing, images, picture, truncated  # noqa: F401 (drawing, images: fixtures)

MB = 1024 * 1024
PROMPT = "A lighthouse on a cliff at dusk, oil painting"


@pytest.fixture(params=["openai", "sdapi"])
def backend(request) -> str:
    return request.param


def use(drawing: Drawing, backend: str, size: str | None = None) -> None:
    if backend == "openai":
        drawing.use_openai("gpt-image-1", size=size)
    else:
        drawing.use_sdapi(size=size)


def send_image(sock, request_id: str = "r1", content: str = PROMPT) -> tuple[dict, str]:
    """Send `content` to be drawn; its `accepted` and the turn's id."""
    sock.send(type="send", request_id=request_id, content=content, image=True)
    accepted = sock.until("accepted", request_id=request_id)
    return accepted, sock.until("turn_start", user_message_id=accepted["message_id"])["turn_id"]


def no_chat_model_request(drawing: Drawing) -> None:
    assert drawing.setup.fake.requests == []  # nothing streamed, no title: the chat model was never asked


def failed(drawing: Drawing, chat: str, sock, turn_id: str) -> tuple[dict, dict, list[dict]]:
    """A turn that ended failed: its error, its reply (status error, nothing on it) and the messages."""
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "failed"
    (error,) = sock.of("error", turn_id)
    assert not sock.of("done", turn_id) and not sock.of("image", turn_id)
    messages = drawing.setup.messages(chat)
    user, reply = messages
    assert (user["role"], user["content"], user["status"]) == ("user", PROMPT, "complete")
    assert reply["role"] == "assistant" and reply["status"] == "error"
    assert reply["error"] == {"code": error["code"], "message": error["message"]}
    assert reply["images"] == [] and reply["content"] == ""
    no_chat_model_request(drawing)
    return error, reply, messages


def open_chat(drawing: Drawing):
    chat = drawing.setup.chat(title="t")  # titled: an untitled chat would ask its model for a title
    return chat, drawing.setup.socket(chat)


# --- drawn -----------------------------------------------------------------------------------------

def test_an_image_send_is_drawn_by_the_openai_images_api_kept_on_its_reply_and_served(drawing):
    partials, final = [picture(96, 96), picture(160, 160)], picture(640, 480)
    drawing.use_openai("gpt-image-1", size="640x480")
    drawing.answer("openai", png=final, partials=partials)
    chat, sock = open_chat(drawing)
    accepted, turn_id = send_image(sock)
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "completed"

    (asked,) = drawing.images.of(OPENAI_PATH)
    assert asked.body == {"model": "gpt-image-1", "prompt": PROMPT, "size": "640x480", "stream": True,
                          "partial_images": 2}  # the message's words, at the setting's size
    user, reply = drawing.setup.messages(chat)
    assert user["id"] == accepted["message_id"] and user["content"] == PROMPT
    (done,) = sock.of("done", turn_id)
    assert done["message_id"] == reply["id"]
    call_id = f"send-{reply['id']}"

    shown = sock.of("image_partial", turn_id)
    assert [(e["message_id"], e["call_id"], e["index"], e["width"]) for e in shown] == [
        (reply["id"], call_id, 0, 96), (reply["id"], call_id, 1, 160)]
    for event, data in zip(shown, partials):
        assert drawing.api.get(event["url"]).body == data
    (image,) = sock.of("image", turn_id)
    assert image == {**image, "message_id": reply["id"], "prompt": PROMPT, "width": 640, "height": 480,
                     "model": "gpt-image-1", "backend": "openai", "call_id": call_id}
    kinds = [e["type"] for e in sock.events if e.get("turn_id") == turn_id]
    assert kinds.index("image_partial") < kinds.index("image") < kinds.index("done") < kinds.index("turn_end")
    assert not {"content", "reasoning", "tool_start", "error"} & set(kinds)
    assert ("message_saved", reply["id"]) in [(e["type"], e.get("message_id")) for e in sock.events]

    assert reply["status"] == "complete" and reply["error"] is None
    assert reply["content"] == "Drew the image (640 × 480 px)."
    assert reply["images"] == [{"file_id": image["file_id"], "prompt": PROMPT, "width": 640, "height": 480,
                                "model": "gpt-image-1", "backend": "openai",
                                "thumbnail_file_id": image["thumbnail_file_id"]}]
    served = drawing.api.get(f"/api/files/{image['file_id']}")
    assert served.status == 200 and served.body == final and served.headers["Content-Type"] == "image/png"
    assert drawing.api.get(f"/api/files/{image['thumbnail_file_id']}").headers["Content-Type"] == "image/webp"
    no_chat_model_request(drawing)


def test_an_image_send_is_drawn_by_sdapi_at_the_settings_size(drawing):
    final = picture(768, 512, "JPEG")
    drawing.use_sdapi(size="768x512")
    drawing.answer("sdapi", png=final)
    chat, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "completed"

    (asked,) = drawing.images.of(SDAPI_PATH)
    assert asked.body == {"prompt": PROMPT, "width": 768, "height": 512, "batch_size": 1, "n_iter": 1,
                          "send_images": True, "save_images": False}
    _, reply = drawing.setup.messages(chat)
    (image,) = sock.of("image", turn_id)
    assert (image["message_id"], image["model"], image["backend"]) == (reply["id"], "fake-sd15", "sdapi")
    assert (image["width"], image["height"]) == (768, 512)
    assert sock.of("done", turn_id)[0]["message_id"] == reply["id"]
    assert reply["status"] == "complete" and reply["content"] == "Drew the image (768 × 512 px)."
    assert [i["file_id"] for i in reply["images"]] == [image["file_id"]]
    served = drawing.api.get(f"/api/files/{image['file_id']}")
    assert served.body == final and served.headers["Content-Type"] == "image/jpeg"
    no_chat_model_request(drawing)


def test_without_a_size_setting_the_backends_own_default_is_drawn(drawing):
    drawing.use_sdapi()
    drawing.answer("sdapi", png=picture(512, 512))
    _, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "completed"
    (asked,) = drawing.images.of(SDAPI_PATH)
    assert (asked.body["width"], asked.body["height"]) == (512, 512)


# --- Stop, failures ---------------------------------------------------------------------------------

def test_stop_while_drawing_cancels_and_keeps_nothing(drawing, backend):
    use(drawing, backend)
    drawing.answer(backend, hang=True)
    chat, sock = open_chat(drawing)
    before = drawing.blobs()
    _, turn_id = send_image(sock)
    drawing.images.wait_requests(OPENAI_PATH if backend == "openai" else SDAPI_PATH, 1)
    started = time.monotonic()
    sock.send(type="stop")
    assert sock.until("turn_end", turn_id=turn_id)["status"] == "cancelled"
    assert time.monotonic() - started < 10
    (error,) = sock.of("error", turn_id)
    assert error["code"] == "cancelled" and "nothing was kept" in error["message"]
    assert not sock.of("image", turn_id) and not sock.of("done", turn_id)
    assert drawing.blobs() == before
    user, reply = drawing.setup.messages(chat)
    assert user["content"] == PROMPT and user["status"] == "complete"
    assert reply["status"] == "cancelled" and reply["images"] == []
    no_chat_model_request(drawing)


@pytest.mark.parametrize("hostile, said", [
    ({"png": truncated()}, "is a damaged PNG file that cannot be decoded"),
    ({"png": b"Sorry, the GPU is busy. Please come back later.\n"}, "is not an image"),
    ({"huge_bytes": 60 * MB}, "is larger than 50 MB, the most Numi keeps of one image"),
], ids=["corrupt", "not-an-image", "too-big"])
def test_a_hostile_answer_fails_the_turn_with_its_sentence_and_keeps_nothing(drawing, backend, hostile, said):
    use(drawing, backend)
    drawing.answer(backend, **hostile)
    chat, sock = open_chat(drawing)
    before = drawing.blobs()
    _, turn_id = send_image(sock)
    error, _, _ = failed(drawing, chat, sock, turn_id)
    assert error["code"] == "image_failed" and said in error["message"]
    assert error["message"].startswith("The image from ")
    assert drawing.blobs() == before


def test_no_backend_says_to_choose_one_in_settings_images(drawing):
    chat, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    error, _, _ = failed(drawing, chat, sock, turn_id)
    assert error["code"] == "no_image_backend"
    assert error["message"] == ("No image backend is set, so nothing can be drawn. Choose one in Settings → Images, "
                                "then send the message again.")
    assert drawing.images.requests == []


def test_a_backend_that_cannot_draw_says_why(drawing):
    drawing.use_openai()
    assert drawing.api.patch(f"/api/providers/{drawing.provider_id}", {"enabled": False}).status == 200
    chat, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    error, _, _ = failed(drawing, chat, sock, turn_id)
    assert error["code"] == "no_image_backend"
    assert error["message"] == ("Fake Images is turned off. Turn it on in Settings → Providers, or pick another "
                                "provider in Settings → Images.")
    assert drawing.images.requests == []


def test_a_server_error_names_its_status(drawing):
    drawing.use_sdapi()
    drawing.answer("sdapi", status=500)
    chat, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    error, _, _ = failed(drawing, chat, sock, turn_id)
    assert error["code"] == "image_failed" and "failed while drawing (HTTP 500)" in error["message"]


# --- frames ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("frame, said", [
    ({"content": "   ", "image": True}, "The message is empty"),
    ({"content": "", "image": True, "attachments": ["UPLOAD"]}, "describe the picture you want"),
    ({"content": PROMPT, "image": True, "compare": ["m_a", "m_b"]}, "one kind of turn"),
    ({"content": PROMPT, "image": True, "research": True}, "one kind of turn"),
    ({"content": PROMPT, "image": True, "mode": "steer"}, "cannot steer"),
    ({"content": PROMPT, "image": "true"}, None),
    ({"content": PROMPT, "image": 1}, None),
], ids=["empty", "empty-with-a-file", "compare", "research", "steer", "string", "number"])
def test_a_bad_image_frame_is_refused_and_saves_nothing(drawing, frame, said):
    drawing.use_sdapi()
    chat, sock = open_chat(drawing)
    if frame.get("attachments"):
        frame = {**frame, "attachments": [drawing.api.upload("fox.png", picture(32, 32)).body["id"]]}
    sock.send(type="send", request_id="r1", **frame)
    error = sock.until("error")
    assert error["code"] == "bad_request" and error["turn_id"] is None
    if said:
        assert said in error["message"]
    sock.send(type="ping")
    sock.until("pong")  # the socket stays open, and nothing came between
    assert [e["type"] for e in sock.events] == ["error", "pong"]
    assert drawing.setup.messages(chat) == []
    assert drawing.images.requests == []
    no_chat_model_request(drawing)


def test_the_same_request_id_twice_draws_one_message(drawing):
    drawing.use_sdapi()
    drawing.answer("sdapi", png=picture(128, 128))
    chat, sock = open_chat(drawing)
    accepted, turn_id = send_image(sock)
    sock.send(type="send", request_id="r1", content=PROMPT, image=True)
    again = sock.until("accepted", request_id="r1")
    assert again["message_id"] == accepted["message_id"]
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "completed"
    sock.send(type="send", request_id="r1", content=PROMPT, image=True)  # after the turn, too
    assert sock.until("accepted", request_id="r1")["message_id"] == accepted["message_id"]
    sock.send(type="ping")
    sock.until("pong")
    assert len(sock.of("turn_start")) == 1
    assert [m["role"] for m in drawing.setup.messages(chat)] == ["user", "assistant"]
    assert len(drawing.images.of(SDAPI_PATH)) == 1
    no_chat_model_request(drawing)


# --- queued, and again ----------------------------------------------------------------------------

def test_an_image_send_queued_behind_a_reply_is_drawn_when_its_turn_comes(drawing):
    drawing.use_sdapi()
    drawing.answer("sdapi", png=picture(128, 96))
    drawing.setup.fake.enqueue([S.text("Hel"), S.hang(), S.text("lo.")])
    chat, sock = open_chat(drawing)
    sock.send(type="send", request_id="r1", content="Say hello.")
    first = sock.until("turn_start")["turn_id"]
    sock.until("content", turn_id=first)
    sock.send(type="send", request_id="r2", content=PROMPT, image=True)
    assert sock.until("accepted", request_id="r2")["queued"] is True
    drawing.setup.fake.release()
    assert sock.until("turn_end", timeout=30, turn_id=first)["status"] == "completed"
    second = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", timeout=60, turn_id=second)["status"] == "completed"
    (image,) = sock.of("image", second)
    messages = drawing.setup.messages(chat)
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Say hello."), ("assistant", "Hello."), ("user", PROMPT),
        ("assistant", "Drew the image (128 × 96 px).")]
    assert [i["file_id"] for i in messages[-1]["images"]] == [image["file_id"]]
    assert len(drawing.setup.fake.requests) == 1  # the first reply's; the image asked no model


def test_regenerating_an_image_reply_draws_it_again(drawing):
    drawing.use_sdapi()
    drawing.answer("sdapi", png=picture(64, 64))
    chat, sock = open_chat(drawing)
    _, turn_id = send_image(sock)
    assert sock.until("turn_end", timeout=60, turn_id=turn_id)["status"] == "completed"
    _, first = drawing.setup.messages(chat)
    drawing.answer("sdapi", png=picture(96, 64))
    sock.send(type="regenerate", message_id=first["id"])
    again = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", timeout=60, turn_id=again)["status"] == "completed"
    _, reply = drawing.setup.messages(chat)
    assert reply["id"] != first["id"] and reply["content"] == "Drew the image (96 × 64 px)."
    (image,) = sock.of("image", again)
    assert image["message_id"] == reply["id"] and [i["file_id"] for i in reply["images"]] == [image["file_id"]]
    assert len(drawing.images.of(SDAPI_PATH)) == 2
    no_chat_model_request(drawing)
