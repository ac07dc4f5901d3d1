"""The `openai` image backend: `POST {base_url}/images/generations` through the `openai` SDK.

GPT image models (`gpt-image-1` …) always answer base64 and take no `response_format`; they
also stream (`stream`, `partial_images`): the partial images go to `partial` as they come, each
checked like the final one, and one that is not an image is skipped. Other models (DALL·E, and
the models of OpenAI-compatible servers such as LocalAI) are asked for `b64_json`. Should a
server answer a `url` anyway, the image is read from it only when it is on the provider's own
address (its base URL, which the person typed in Settings → Providers); a link anywhere else
is refused with a sentence, so an answer can never make Numi fetch from another host or the
person's own network. Answers are read through the SDK's raw response in capped chunks
(wire.py): a body larger than an image within the limits is never held whole. The SDK retries
nothing (`max_retries=0`): a drawing is slow and costs money, and the model may try again.
"""
from __future__ import annotations

import logging
import re
from typing import Callable

from backend.core.errors import ProviderError
from backend.core.types import ProviderConfig
from backend.features.images import picture, wire
from backend.features.images.wire import DrawFailed
from backend.providers import api_failure
from backend.providers.wire import client_timeout, openai_base_url, sendable_key

log = logging.getLogger(__name__)

PARTIALS = 2  # partial images a streaming model is asked for (the API allows 0–3)
GPT_IMAGE = re.compile(r"gpt-image|chatgpt-image", re.I)
DRAWING = api_failure.Task(doing="draw", refusing="draw this", while_doing="drawing", api="images API",
                           model_kind="image model", settings="Settings → Images",
                           refused_fix=" Change the prompt or the size, then try again.", broke="the image",
                           lost="; nothing was kept")

Partial = Callable[[int, picture.Picture], None]


def is_gpt_image(model: str) -> bool:
    """A GPT image model: base64 always, no response_format, streams partial images."""
    return bool(GPT_IMAGE.search(model))


def draw(provider: ProviderConfig, model: str, prompt: str, size: str | None, cancel,
         partial: Partial | None = None) -> picture.Picture:
    """The image `model` draws for `prompt`, checked; DrawFailed or picture.NotAnImage with a sentence."""
    import openai

    try:
        key, base_url = sendable_key(provider), openai_base_url(provider)
    except ProviderError as exc:
        raise DrawFailed(str(exc)) from None
    guard = wire.Guard(cancel, wire.timeout_s())
    client = openai.OpenAI(api_key=key, base_url=base_url, http_client=guard.client(), max_retries=0,
                           timeout=client_timeout(guard.timeout))
    what = f"The image from {provider.name}"
    params: dict = {"model": model, "prompt": prompt}
    if size:
        params["size"] = size
    if not is_gpt_image(model):
        params["response_format"] = "b64_json"
    elif partial is not None:
        params.update(stream=True, partial_images=PARTIALS)
    try:
        with client.images.with_streaming_response.generate(**params) as response:
            if "text/event-stream" in response.headers.get("content-type", ""):
                return _streamed(response.iter_bytes(), provider, what, partial)
            body = wire.read_capped(response.iter_bytes(), response.headers.get("content-length"),
                                    wire.body_cap(), what)
        return picture.check(_image_bytes(wire.json_answer(body, what), provider, base_url, guard, what), what)
    except (DrawFailed, picture.NotAnImage):
        if guard.why is not None:
            raise _cut(guard, provider) from None
        raise
    except Exception as exc:
        raise _failure(exc, guard, provider, model, base_url) from None
    finally:
        guard.close()


def _streamed(chunks, provider: ProviderConfig, what: str, partial: Partial | None) -> picture.Picture:
    """The final image of a stream of `image_generation.partial_image` / `.completed` events."""
    seen = 0
    cap = wire.body_cap()
    for event in wire.sse_events(chunks, cap, (PARTIALS + 2) * cap, what):
        kind = event.get("type")
        if kind == "image_generation.partial_image":
            if partial is None or seen >= PARTIALS:
                continue
            seen += 1
            try:
                shown = picture.check(picture.from_base64(event.get("b64_json"), "A partial image"), "A partial image")
            except picture.NotAnImage as exc:
                log.warning("images: a partial image from %s was skipped: %s", provider.name, exc)
                continue
            index = event.get("partial_image_index")
            partial(index if isinstance(index, int) and not isinstance(index, bool) else seen - 1, shown)
        elif kind == "image_generation.completed":
            return picture.check(picture.from_base64(event.get("b64_json"), what), what)
        elif kind == "error" or "error" in event:
            raise DrawFailed(f"{provider.name} stopped drawing{wire.said(wire.upstream_message(event))}")
    raise DrawFailed(f"{provider.name}'s stream ended before the image was finished. Try again.")


def _image_bytes(answer: dict, provider: ProviderConfig, base_url: str, guard: wire.Guard, what: str) -> bytes:
    """The image an images API answer holds: its base64, or what its URL serves on the provider's address."""
    items = answer.get("data")
    first = items[0] if isinstance(items, list) and items else None
    if not isinstance(first, dict):
        said = wire.upstream_message(answer)
        raise DrawFailed(f"{provider.name} answered without an image{wire.said(said)}")
    if first.get("b64_json"):
        return picture.from_base64(first["b64_json"], what)
    url = first.get("url")
    if isinstance(url, str) and url:
        return _fetched(url, provider, base_url, guard, what)
    raise DrawFailed(f"{provider.name} answered without an image (neither b64_json nor url).")


def _fetched(url: str, provider: ProviderConfig, base_url: str, guard: wire.Guard, what: str) -> bytes:
    from backend.tools.fetch_guard import origin

    try:
        same = url.lower().startswith(("http://", "https://")) and origin(url) == origin(base_url)
        where = origin(url)
    except ValueError:
        same, where = False, "an address that is not a web address"
    if not same:
        raise DrawFailed(f"{provider.name} answered with a link to the image on {where} instead of the image itself. "
                         f"Numi asks for the image's bytes (b64_json) and reads a link only from the provider's own "
                         f"address ({origin(base_url)}), never from another host or your own network. Check the "
                         f"server's settings, or pick another image model in Settings → Images.")
    with guard.client().stream("GET", url, follow_redirects=False) as response:
        if response.status_code != 200:
            raise DrawFailed(f"{provider.name} answered with a link to the image, and reading it gave HTTP "
                             f"{response.status_code}. Try again.")
        return wire.read_capped(response.iter_bytes(), response.headers.get("content-length"),
                                picture.max_bytes(), what)


def _cut(guard: wire.Guard, provider: ProviderConfig) -> DrawFailed:
    if guard.why == "stopped":
        return DrawFailed("Stopped before the image was finished; nothing was kept.")
    return DrawFailed(f"{provider.name} did not finish the image within {guard.timeout:g} s, the most Numi waits "
                      f"for one; nothing was kept. Try again, or ask for a smaller image.")


def _failure(exc: Exception, guard: wire.Guard, provider: ProviderConfig, model: str, base_url: str) -> DrawFailed:
    """The sentence for a drawing that got no image."""
    if guard.why is not None:
        return _cut(guard, provider)
    return DrawFailed(api_failure.sentence(exc, provider.name, model, base_url, DRAWING))
