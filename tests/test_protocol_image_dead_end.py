"""A send with an image when no model can see images is refused before its turn starts
(`error` `vision_unsupported`, the composer's sentence): no message is saved, nothing runs."""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.sample_files import png


def test_an_image_no_model_can_see_is_refused_before_the_turn(setup):
    chat = setup.chat(title="t")
    image = setup.api.upload("blue.png", png()).body
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="What is this?", attachments=[image["id"]])
    error = sock.until("error")
    assert error["code"] == "vision_unsupported" and error["turn_id"] is None
    assert error["message"] == ("No model here can see images, so blue.png cannot be sent. Turn vision on for a "
                                "model that can see them in Settings → Models, or remove the image.")
    # The same send once a model sees images is accepted: the refusal saved nothing.
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"vision": True}}).status == 200
    setup.fake.enqueue([S.text("A blue square.")])
    sock.send(type="send", request_id="r2", content="What is this?", attachments=[image["id"]])
    assert sock.until("accepted")["request_id"] == "r2"
    assert sock.until("turn_end", timeout=30)["status"] == "completed"
    assert [m["content"] for m in setup.messages(chat) if m["role"] == "user"] == ["What is this?"]
    sock.close()
