"""Images (CONTRACT §13) around the drawing: `settings.images` and each of its refusals, discovery listing
image models apart from chat models, and export and import keeping a drawn image with its file — as JSON
into the same Numi and as a zip into a fresh one. The drawing itself: tests/test_images_protocol.py."""
from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile

import pytest

from tests.chat_samples import import_file
from tests.images_helpers import Drawing, drawing, images, picture  # noqa: F401 (drawing, images: fixtures)

DEFAULT = {"backend": None, "provider_id": None, "model": None, "url": None, "size": None, "problem": None}


def settings_of(api) -> dict:
    return api.get("/api/settings").body["images"]


# --- settings.images ------------------------------------------------------------------------------

def test_images_are_off_until_set_and_a_patch_replaces_the_whole_object(drawing):
    api = drawing.api
    assert settings_of(api) == DEFAULT
    shown = drawing.use_openai("gpt-image-1", size="1024X1536")
    assert shown == {**DEFAULT, "backend": "openai", "provider_id": drawing.provider_id, "model": "gpt-image-1",
                     "size": "1024x1536"}
    # What GET gives goes back as it is (problem included: it is worked out, not kept).
    assert api.patch("/api/settings", {"images": settings_of(api)}).body["images"] == shown
    r = api.patch("/api/settings", {"images": {"backend": "sdapi", "url": "http://127.0.0.1:7860/"}})
    assert r.status == 200, r
    assert r.body["images"] == {**DEFAULT, "backend": "sdapi", "url": "http://127.0.0.1:7860"}  # nothing merged
    assert api.patch("/api/settings", {"images": {"backend": "openai", "provider_id": drawing.provider_id,
                                                  "model": "gpt-image-1", "size": "auto"}}).status == 200
    assert settings_of(api)["size"] == "auto"
    assert api.patch("/api/settings", {"images": None}).body["images"] == DEFAULT
    drawing.use_sdapi(model="sd_xl_base_1.0", size="512x768")
    assert api.patch("/api/settings", {"images": {"backend": None}}).body["images"] == DEFAULT


REFUSALS = [
    ({"images": "on"}, "images", "Must be an object like"),
    ({"images": {}}, "images.backend", "This field is required."),
    ({"images": {"backend": "midjourney"}}, "images.backend", "Must be one of: openai, sdapi, or null"),
    ({"images": {"backend": None, "model": "x"}}, "images.model", "Leave it out (or null) when there is no image"),
    ({"images": {"backend": "openai", "model": "gpt-image-1"}}, "images.provider_id", "This field is required."),
    ({"images": {"backend": "openai", "provider_id": "p_nope", "model": "gpt-image-1"}}, "images.provider_id",
     "No provider with the id 'p_nope'."),
    ({"images": {"backend": "openai", "provider_id": "{anthropic}", "model": "gpt-image-1"}}, "images.provider_id",
     "speaks Anthropic's API, which draws no images"),
    ({"images": {"backend": "openai", "provider_id": "{images}"}}, "images.model", "This field is required."),
    ({"images": {"backend": "openai", "provider_id": "{images}", "model": "  "}}, "images.model", "Must not be empty."),
    ({"images": {"backend": "openai", "provider_id": "{images}", "model": "m", "url": "http://127.0.0.1:7860"}},
     "images.url", 'An "openai" backend draws through its provider\'s base URL'),
    ({"images": {"backend": "sdapi"}}, "images.url", "This field is required."),
    ({"images": {"backend": "sdapi", "url": "ftp://127.0.0.1/"}}, "images.url", "Must be an http:// or https:// URL"),
    ({"images": {"backend": "sdapi", "url": "http://"}}, "images.url", "Must be an http:// or https:// URL"),
    ({"images": {"backend": "sdapi", "url": "http://127.0.0.1:7860", "provider_id": "{images}"}},
     "images.provider_id", 'An "sdapi" backend is reached by its url'),
    ({"images": {"backend": "sdapi", "url": "http://127.0.0.1:7860", "size": "big"}}, "images.size",
     'Must be a size like "1024x1024" (width x height in pixels).'),
    ({"images": {"backend": "sdapi", "url": "http://127.0.0.1:7860", "size": "auto"}}, "images.size",
     'Must be a size like "1024x1024"'),
    ({"images": {"backend": "openai", "provider_id": "{images}", "model": "m", "size": "32x32"}}, "images.size",
     "Each side must be from 64 to 8,192 pixels (this is 32 x 32)."),
    ({"images": {"backend": "openai", "provider_id": "{images}", "model": "m", "size": "9000x1024"}}, "images.size",
     "Each side must be from 64 to 8,192 pixels"),
    ({"images": {"backend": "openai", "provider_id": "{images}", "model": "m", "size": 1024}}, "images.size",
     'Must be a size like "1024x1024"'),
    ({"images": {"backend": "sdapi", "url": "http://127.0.0.1:7860", "steps": 30}}, "images.steps",
     "Unknown field."),
]


@pytest.mark.parametrize("body,field,sentence", REFUSALS, ids=[f"{i}-{r[1]}" for i, r in enumerate(REFUSALS)])
def test_each_refusal_is_a_422_with_a_sentence_and_nothing_is_saved(drawing, body, field, sentence):
    api = drawing.api
    anthropic = api.post("/api/providers", {"kind": "anthropic", "name": "Claude", "api_key": "sk-ant-test"}).body
    ids = {"{anthropic}": anthropic["id"], "{images}": drawing.provider_id}
    body = json.loads(json.dumps(body), object_hook=lambda o: {k: ids.get(v, v) if isinstance(v, str) else v
                                                               for k, v in o.items()})
    drawing.use_sdapi(size="640x640")
    before = settings_of(api)
    r = api.patch("/api/settings", body)
    assert r.status == 422, r
    assert sentence in r.body["error"]["fields"][field], r.body
    assert settings_of(api) == before


# --- discovery ------------------------------------------------------------------------------------

def test_discovery_lists_image_models_apart_and_never_as_chat_models(server, api, fake):
    fake.models = ["gpt-4o-mini", "dall-e-3", "gpt-image-1", "text-embedding-3-small"]
    openai = api.post("/api/providers", {"kind": "openai", "name": "OpenAI", "base_url": fake.base_url,
                                         "api_key": "sk-test-not-real"}).body
    r = api.post(f"/api/providers/{openai['id']}/discover")
    assert r.status == 200, r
    assert [m["api_model"] for m in r.body["added"]] == ["gpt-4o-mini"]
    assert [m["api_model"] for m in r.body["image_models"]] == ["dall-e-3", "gpt-image-1"]
    assert all(isinstance(m["label"], str) and m["label"] for m in r.body["image_models"])
    assert {m["api_model"] for m in api.get("/api/models").body} == {"gpt-4o-mini"}

    # An OpenAI-compatible server's Stable Diffusion or FLUX is no chat model either (it was added as one before).
    fake.models = ["llama3.1:8b", "stable-diffusion-xl-base-1.0", "flux.1-schnell"]
    local = api.post("/api/providers", {"kind": "openai_compatible", "name": "LocalAI",
                                        "base_url": fake.base_url}).body
    r = api.post(f"/api/providers/{local['id']}/discover")
    assert [m["api_model"] for m in r.body["added"]] == ["llama3.1:8b"]
    assert [m["api_model"] for m in r.body["image_models"]] == ["stable-diffusion-xl-base-1.0", "flux.1-schnell"]

    # Settings → Images asks for a provider's image models (a network call: a POST).
    r = api.post("/api/images/models", {"provider_id": local["id"]})
    assert r.status == 200, r
    assert r.body["items"] == [{"api_model": "stable-diffusion-xl-base-1.0", "label": "Stable Diffusion Xl Base 1.0"},
                               {"api_model": "flux.1-schnell", "label": "Flux.1 Schnell"}]
    anthropic = api.post("/api/providers", {"kind": "anthropic", "name": "Claude", "api_key": "sk-ant-x"}).body
    r = api.post("/api/images/models", {"provider_id": anthropic["id"]})
    assert r.status == 422 and "draws no images" in r.body["error"]["fields"]["provider_id"]
    assert api.post("/api/images/models", {"provider_id": "p_nope"}).status == 422
    assert api.post("/api/images/models", {}).status == 422
    keyless = api.post("/api/providers", {"kind": "openai", "name": "Keyless", "base_url": fake.base_url}).body
    assert api.post("/api/images/models", {"provider_id": keyless["id"]}).status == 409


# --- export and import ----------------------------------------------------------------------------

def drawn_chat(drawing: Drawing) -> tuple[str, bytes, dict]:
    """A chat with one drawn image (it has a thumbnail); (chat id, the image's bytes, the message's image)."""
    final = picture(800, 600)
    drawing.use_openai("gpt-image-1")
    drawing.answer("openai", png=final, stream=False)
    chat = drawing.setup.chat(title="Foxes")
    sock = drawing.setup.socket(chat)
    assert drawing.turn(sock, "r1", {"prompt": "a fox in the snow"})["status"] == "completed"
    sock.close()
    (image,) = [i for m in drawing.setup.messages(chat) if m["role"] == "assistant" for i in m["images"]]
    return chat, final, image


def images_of(api, chat_id: str) -> list[dict]:
    items = api.get(f"/api/chats/{chat_id}/messages?limit=200").body["items"]
    return [i for m in items if m["role"] == "assistant" for i in m["images"]]


def test_a_json_export_carries_the_image_and_its_thumbnail_and_import_brings_them_back(drawing, start_server):
    api = drawing.api
    chat, final, image = drawn_chat(drawing)
    exported = api.get(f"/api/chats/{chat}/export?format=json").body
    (item,) = [i for c in exported["chats"] for m in c["messages"] for i in m.get("images", [])]
    assert {k: item[k] for k in ("prompt", "width", "height", "model", "backend")} == {
        "prompt": "a fox in the snow", "width": 800, "height": 600, "model": "gpt-image-1", "backend": "openai"}
    assert item["file"]["mime"] == "image/png" and item["file"]["sha256"] == hashlib.sha256(final).hexdigest()
    assert base64.b64decode(item["file"]["data"]) == final
    assert item["thumbnail"]["mime"] == "image/webp"
    assert sum("images" in m for c in exported["chats"] for m in c["messages"]) == 1  # left out where none

    # Into a fresh Numi, whose files/ has none of these bytes: they come from the export itself.
    other = start_server().api()
    r = other.post("/api/import", exported)
    assert r.status == 201, r
    (back,) = images_of(other, r.body["chat_ids"][0])
    assert {k: back[k] for k in ("prompt", "width", "height", "model", "backend")} == \
        {k: image[k] for k in ("prompt", "width", "height", "model", "backend")}
    served = other.get(f"/api/files/{back['file_id']}")
    assert served.body == final and served.headers["Content-Type"] == "image/png"
    thumb = other.get(f"/api/files/{back['thumbnail_file_id']}")
    assert thumb.body == api.get(f"/api/files/{image['thumbnail_file_id']}").body
    # Exported again, it is the same image.
    again = other.get(f"/api/chats/{r.body['chat_ids'][0]}/export?format=json").body
    (item_again,) = [i for c in again["chats"] for m in c["messages"] for i in m.get("images", [])]
    assert item_again == item

    # Markdown says what was drawn, by what.
    md = api.get(f"/api/chats/{chat}/export?format=md").body.decode()
    assert "- Image: a-fox-in-the-snow.png (800 × 600 px, by gpt-image-1), drawn from: a fox in the snow" in md


def test_the_zip_export_carries_the_image_files_into_a_fresh_numi(drawing, start_server):
    chat, final, image = drawn_chat(drawing)
    r = drawing.api.get("/api/export")
    assert r.status == 200
    names = zipfile.ZipFile(io.BytesIO(r.body)).namelist()
    assert f"files/{hashlib.sha256(final).hexdigest()}" in names
    other = start_server().api()
    r = import_file(other, "numi-export.zip", r.body)
    assert r.status == 201, r
    (back,) = images_of(other, r.body["chat_ids"][0])
    assert other.get(f"/api/files/{back['file_id']}").body == final
    assert other.get(f"/api/files/{back['thumbnail_file_id']}").status == 200


def test_an_export_whose_image_is_malformed_is_refused_whole(drawing):
    api = drawing.api
    chat, _final, _image = drawn_chat(drawing)
    exported = api.get(f"/api/chats/{chat}/export?format=json").body
    before = api.get("/api/chats").body["items"]
    for broken, field in ((lambda i: i.update(width=0), "images[0]"),
                          (lambda i: i.update(prompt=7), "images[0].prompt"),
                          (lambda i: i.pop("file"), "images[0].file"),
                          (lambda i: i["file"].update(sha256="nope"), "images[0].file.sha256")):
        doc = json.loads(json.dumps(exported))
        (message,) = [m for c in doc["chats"] for m in c["messages"] if m.get("images")]
        broken(message["images"][0])
        r = api.post("/api/import", doc)
        assert r.status == 422, r
        assert any(k.endswith(field) for k in r.body["error"]["fields"]), r.body
        assert api.get("/api/chats").body["items"] == before
