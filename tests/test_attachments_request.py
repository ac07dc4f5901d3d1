"""Attachments in the model request, through the real server and the fake provider.

Images become each wire API's own image part; text files and PDFs become text
(file context) within a budget, with a note where they were cut; an image never
reaches a model that cannot see it.
"""
from __future__ import annotations

import base64

import pytest

from tests.fakeprovider import script as S
from tests.sample_files import pdf, png

WIRES = {
    # wire_api: (provider kind, base url attribute of the fake)
    "chat_completions": ("openai_compatible", "base_url"),
    "responses": ("openai", "base_url"),
    "anthropic_messages": ("anthropic", "url"),
}


def add_model(setup, wire_api: str, *, vision: bool, label: str) -> str:
    kind, attr = WIRES[wire_api]
    provider = setup.api.post("/api/providers", {"kind": kind, "name": f"Fake {label}",
                                                 "base_url": getattr(setup.fake, attr),
                                                 "api_key": "test-key-123", "timeout": 10})
    assert provider.status == 201, provider
    model = setup.api.post("/api/models", {"provider_id": provider.body["id"], "api_model": f"{wire_api}-model",
                                           "wire_api": wire_api, "label": label,
                                           "supports": {"vision": vision}})
    assert model.status == 201, model
    assert model.body["supports"]["vision"] is vision
    return model.body["id"]


def upload(setup, name: str, data: bytes) -> dict:
    r = setup.api.upload(name, data)
    assert r.status == 201, r
    return r.body


def turn(setup, chat: str, content: str, files: list[dict], request_id: str = "r1"):
    """Send a message with files; return (the socket, turn_end status, request bodies this turn)."""
    before = len(setup.fake.requests)
    sock = setup.socket(chat)
    sock.send(type="send", request_id=request_id, content=content, attachments=[f["id"] for f in files])
    status = sock.until("turn_end", timeout=30)["status"]
    return sock, status, [r.body for r in setup.fake.requests[before:]]


def user_text(wire_api: str, body: dict) -> str:
    """All the text of the last user message of a request body, in any wire API."""
    if wire_api == "responses":
        content = [i for i in body["input"] if i.get("role") == "user"][-1]["content"]
        return "".join(p.get("text", "") for p in content)
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


@pytest.mark.parametrize("wire_api", list(WIRES))
def test_an_image_becomes_the_wire_apis_image_part(setup, wire_api):
    model = add_model(setup, wire_api, vision=True, label="Seeing")
    chat = setup.chat(title="t", model_id=model)
    image = png()
    b64 = base64.b64encode(image).decode()
    f = upload(setup, "dot.png", image)
    sock, status, (body,) = turn(setup, chat, "What colour is this?", [f])
    assert status == "completed", sock.of("error")

    if wire_api == "chat_completions":
        assert body["messages"][-1] == {"role": "user", "content": [
            {"type": "text", "text": "What colour is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}]}
    elif wire_api == "responses":
        content = body["input"][-1]["content"]
        assert content[0] == {"type": "input_text", "text": "What colour is this?"}
        assert content[1]["type"] == "input_image"
        assert content[1]["image_url"] == f"data:image/png;base64,{b64}"
    else:
        assert body["messages"][-1]["content"] == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
            {"type": "text", "text": "What colour is this?"}]

    # The message keeps its file: in the event that accepted it and in the listing.
    accepted = sock.of("accepted")[0]
    assert [a["id"] for a in accepted["attachments"]] == [f["id"]]
    user = setup.messages(chat)[0]
    assert user["content"] == "What colour is this?"  # the text as written, without file context
    assert [(a["id"], a["name"], a["mime"], a["size"], a["sha256"]) for a in user["attachments"]] == [
        (f["id"], "dot.png", "image/png", len(image), f["sha256"])]


@pytest.mark.parametrize("wire_api", list(WIRES))
def test_text_files_and_pdfs_go_in_as_file_context(setup, wire_api):
    model = add_model(setup, wire_api, vision=False, label="Reader")
    chat = setup.chat(title="t", model_id=model)
    notes = upload(setup, "notes.md", b"# Plan\n\n- buy milk\n- write tests\n")
    table = upload(setup, "prices.csv", b"item,price\nmilk,1.20\n")
    paper = upload(setup, "paper.pdf", pdf([["Attention is what you need."], ["Second page words."]]))
    _, status, (body,) = turn(setup, chat, "Summarise these.", [notes, table, paper])
    assert status == "completed"
    text = user_text(wire_api, body)
    assert '<attachment name="notes.md" type="text/markdown"' in text
    assert "- buy milk\n- write tests" in text
    assert '<attachment name="prices.csv" type="text/csv"' in text and "milk,1.20" in text
    assert '<attachment name="paper.pdf" type="application/pdf"' in text
    assert "--- page 1 of 2 ---\nAttention is what you need." in text
    assert "--- page 2 of 2 ---\nSecond page words." in text
    # The files come first, in the order attached; what the person wrote ends the message.
    assert text.index("notes.md") < text.index("prices.csv") < text.index("paper.pdf")
    assert text.rstrip().endswith("Summarise these.")
    assert "truncated" not in text


def test_files_are_cut_to_the_budget_with_a_note(setup_with):
    setup = setup_with({"NUMI_ATTACH_FILE_CHARS": "1000", "NUMI_ATTACH_TOTAL_CHARS": "1500"})
    chat = setup.chat(title="t")
    long_text = "".join(f"line {i:04d}\n" for i in range(500))  # 5 000 characters
    big = upload(setup, "big.txt", long_text.encode())
    second = upload(setup, "second.txt", ("x" * 800).encode())
    third = upload(setup, "third.txt", b"never shown")
    _, status, (body,) = turn(setup, chat, "Read them.", [big, second, third])
    assert status == "completed"
    text = user_text("chat_completions", body)
    assert long_text[:1000] in text and long_text[:1001] not in text
    assert ("[Numi: big.txt was truncated to fit the attachment budget: only the first 1,000 "
            "characters of 5,000 characters are included.]") in text
    # 500 characters of the message's budget were left for the second file, none for the third.
    assert "x" * 500 in text and "x" * 501 not in text
    assert "second.txt was truncated" in text
    assert "never shown" not in text and "the whole attachment budget of 1,500 characters" in text


def test_a_binary_file_is_named_but_not_sent(setup):
    chat = setup.chat(title="t")
    blob = upload(setup, "data.bin", bytes(range(256)) * 4)
    _, status, (body,) = turn(setup, chat, "What is this?", [blob])
    assert status == "completed"
    text = user_text("chat_completions", body)
    assert '<attachment name="data.bin" type="application/octet-stream" size="1 KB">' in text
    assert "binary file" in text and "\x00" not in text


def test_a_model_without_vision_is_refused_an_image_before_any_request(setup):
    assert setup.model["supports"]["vision"] is False
    # A model that can see exists (with none, the send itself is refused: test_protocol_image_dead_end.py).
    seeing = add_model(setup, "chat_completions", vision=True, label="Seeing")
    chat = setup.chat(title="t")  # on the fake's text-only model
    image = upload(setup, "photo.png", png())
    sock, status, bodies = turn(setup, chat, "What is in the photo?", [image])
    assert status == "failed"
    assert bodies == [] and setup.fake.requests == []  # nothing reached the provider
    error = sock.of("error")[0]
    assert error["code"] == "vision_unsupported"
    assert "Fake cannot see images" in error["message"] and "photo.png" in error["message"]
    # Nothing is lost: the message and its image stay, the failed reply says why.
    user, reply = setup.messages(chat)
    assert user["content"] == "What is in the photo?" and user["attachments"][0]["id"] == image["id"]
    assert reply["status"] == "error" and reply["error"]["code"] == "vision_unsupported"

    # With the model that can see, Retry (regenerate) sends the very same image.
    assert setup.api.patch(f"/api/chats/{chat}", {"model_id": seeing}).status == 200
    setup.fake.enqueue([S.text("A red dot.")])
    sock.send(type="regenerate", message_id=reply["id"])
    assert sock.until("turn_end", timeout=30, status="completed")
    (body,) = [r.body for r in setup.fake.requests]
    assert body["messages"][-1]["content"][-1]["type"] == "image_url"
    sock.close()


def test_an_older_image_becomes_a_note_for_a_model_without_vision(setup):
    seeing = add_model(setup, "chat_completions", vision=True, label="Seeing")
    chat = setup.chat(title="t", model_id=seeing)
    image = upload(setup, "chart.png", png())
    _, status, _ = turn(setup, chat, "Look at this chart.", [image], "r1")
    assert status == "completed"
    # The chat moves to the text-only model: it goes on, told what it cannot see.
    assert setup.api.patch(f"/api/chats/{chat}", {"model_id": setup.model["id"]}).status == 200
    _, status, (body,) = turn(setup, chat, "And what do you think?", [], "r2")
    assert status == "completed"
    first = body["messages"][0]
    assert isinstance(first["content"], str)  # no image part for this model
    assert '<attachment name="chart.png" type="image/png"' in first["content"]
    assert "this image is not shown: Fake cannot see images" in first["content"]
    assert first["content"].endswith("Look at this chart.")


def test_a_queued_message_of_files_alone_is_previewed_by_their_names(setup):
    chat = setup.chat(title="t")
    notes = upload(setup, "notes.txt", b"some notes\n")
    setup.fake.enqueue([S.text("first "), S.hang(), S.text("answer")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="Hello")
    setup.fake.wait_hanging()
    sock.send(type="send", request_id="r2", content="", attachments=[notes["id"]])
    queued = sock.until("accepted", request_id="r2")
    assert queued["queued"] is True and [a["name"] for a in queued["attachments"]] == ["notes.txt"]
    assert sock.until("queue")["items"] == [{"message_id": queued["message_id"], "preview": "Files: notes.txt",
                                           "steer": False}]
    setup.fake.release()
    sock.until("turn_end", status="completed")  # the first turn; the queued one runs next
    sock.until("turn_end", status="completed", timeout=30)
    last_request = setup.fake.requests[-1].body
    assert "some notes" in user_text("chat_completions", last_request)
    sock.close()
