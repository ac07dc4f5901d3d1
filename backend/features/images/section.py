"""The `images` section of /api/settings (CONTRACT §13): which backend draws, or none.

`{"backend": null | "openai" | "sdapi", "provider_id"?, "model"?, "url"?, "size"?}`; a PATCH
replaces the whole object, and `null` (the default, or `{"images": null}`) means no images.
`openai` draws through the OpenAI images API of a catalog provider of kind `openai` or
`openai_compatible`, `model` being the upstream name (`gpt-image-1`); `sdapi` posts to
`<url>/sdapi/v1/txt2img` (Automatic1111, Forge, stable-diffusion.cpp's server), `url` the
server's base address and `model`, when given, the checkpoint it switches to. `size` is the
default `WIDTHxHEIGHT` (each side 64–8 192 px; `auto` too for `openai`). GET shows every key
(null where unset) and `problem`: why no `image_generate` is offered although a backend is
chosen (its provider gone or turned off, or one of kind `openai` without its key), else null.
"""
from __future__ import annotations

import re

from backend.fields import MISSING, Fields
from backend.store import chats, settings
from backend.store.settings import Section

SETTING = "images"
BACKENDS = ("openai", "sdapi")
OPENAI_KINDS = ("openai", "openai_compatible")  # the providers whose API has /v1/images/generations
KEYS = ("backend", "provider_id", "model", "url", "size")
SHOWN_ONLY = ("problem",)  # what GET adds: a PATCH may send it back, and it is not kept
DEFAULTS: dict = {k: None for k in KEYS}
MODEL_MAX = 200
MIN_SIDE, MAX_SIDE = 64, 8192
SIZE = re.compile(r"^\s*(\d{1,5})\s*[xX×]\s*(\d{1,5})\s*$")
EXAMPLE = ('Must be an object like {"backend": "openai", "provider_id": "p_…", "model": "gpt-image-1"}, '
           '{"backend": "sdapi", "url": "http://127.0.0.1:7860"}, or {"backend": null} for no images.')


def parse_size(value, backend: str | None) -> tuple[int, int] | str:
    """(width, height) of a "1024x1024" size, or "auto" (OpenAI's); ValueError with a sentence."""
    if isinstance(value, str) and value.strip().lower() == "auto" and backend != "sdapi":
        return "auto"
    found = SIZE.match(value) if isinstance(value, str) else None
    if found is None:
        raise ValueError('Must be a size like "1024x1024" (width x height in pixels)'
                         + (', or "auto".' if backend != "sdapi" else "."))
    width, height = int(found.group(1)), int(found.group(2))
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise ValueError(f"Each side must be from {MIN_SIDE} to {MAX_SIDE:,} pixels (this is {width} x {height}).")
    return width, height


def size_text(size: tuple[int, int] | str) -> str:
    return size if isinstance(size, str) else f"{size[0]}x{size[1]}"


def stored() -> dict:
    """The setting as saved: every key of DEFAULTS (null where unset); backend null when off."""
    value = settings.get_object(SETTING)
    backend = value.get("backend")
    if backend not in BACKENDS:
        return dict(DEFAULTS)
    return {k: value.get(k) if isinstance(value.get(k), str) else None for k in KEYS}


def provider(provider_id: str | None):
    """The catalog's provider row, or None."""
    return chats.provider(provider_id)


def problem(keys=None) -> str | None:
    """Why the chosen backend cannot draw now (a sentence), or None. `keys`: the key store, when
    known (an `openai` provider without its key cannot draw)."""
    reason = cannot_draw(keys)
    return reason[:-1] + "; until then the model is offered no image_generate." if reason else None


def cannot_draw(keys=None) -> str | None:
    """problem()'s sentence without what it means for the model (an image send says it as it is)."""
    config = stored()
    if config["backend"] != "openai":
        return None
    found = provider(config["provider_id"])
    if found is None:
        return "The provider chosen for images is no longer in the catalog. Pick another in Settings → Images."
    if not found.enabled:
        return (f"{found.name} is turned off. Turn it on in Settings → Providers, or pick another provider in "
                f"Settings → Images.")
    if found.kind == "openai" and keys is not None and not keys.has(found.id):
        return f"{found.name} has no API key. Add it in Settings → Providers."
    return None


def _images(fields: Fields):
    """The `images` object sent, or MISSING (each problem noted in `fields`)."""
    body = fields.raw(SETTING, False, True)
    if body is MISSING:
        return MISSING
    if body is None:
        return dict(DEFAULTS)
    if not isinstance(body, dict):
        return fields.fail(SETTING, EXAMPLE)
    f = Fields(body, allowed=KEYS + SHOWN_ONLY, prefix=SETTING + ".")
    backend = f.raw("backend", True, True)
    if backend is not MISSING and backend is not None and backend not in BACKENDS:
        backend = f.fail("backend", f"Must be one of: {', '.join(BACKENDS)}, or null for no images.")
    if backend is None:
        for key in KEYS[1:]:
            if body.get(key) is not None:
                f.fail(key, "Leave it out (or null) when there is no image backend.")
        fields.errors.update(f.errors)
        return MISSING if f.errors else dict(DEFAULTS)
    out = dict(DEFAULTS, backend=backend)
    model = f.text("model", max_len=MODEL_MAX, required=backend == "openai", nullable=backend != "openai",
                   non_empty=True, strip=True)
    out["model"] = model if isinstance(model, str) and model else None
    if backend == "openai":
        provider_id = f.text("provider_id", max_len=200, required=True, non_empty=True, strip=True)
        if isinstance(provider_id, str):
            found = provider(provider_id)
            if found is None:
                f.fail("provider_id", f"No provider with the id {provider_id!r}. Pick one from Settings → Providers "
                                      f"(GET /api/providers lists their ids).")
            elif found.kind not in OPENAI_KINDS:
                f.fail("provider_id", f"{found.name} speaks Anthropic's API, which draws no images. Pick an OpenAI "
                                      f"or OpenAI-compatible provider.")
            out["provider_id"] = provider_id
        if body.get("url") is not None:
            f.fail("url", 'An "openai" backend draws through its provider\'s base URL: leave url out (or null).')
    elif backend == "sdapi":
        url = f.url("url", required=True)
        if isinstance(url, str):
            out["url"] = url.rstrip("/")
        if body.get("provider_id") is not None:
            f.fail("provider_id", 'An "sdapi" backend is reached by its url: leave provider_id out (or null).')
    size = f.raw("size", False, True)
    if size is not MISSING and size is not None and isinstance(backend, str):
        try:
            out["size"] = size_text(parse_size(size, backend))
        except ValueError as exc:
            f.fail("size", str(exc))
    fields.errors.update(f.errors)
    return MISSING if f.errors or backend is MISSING else out


def _keys():
    """The app's key store, through the feature's service, inside a request (else None)."""
    from flask import current_app, has_app_context

    from backend.turns import features

    try:
        service = features.service(current_app, SETTING) if has_app_context() else None
    except (KeyError, AttributeError):  # an app without Numi's runtime (a test's)
        return None
    return getattr(service, "keys", None)


def shown() -> dict:
    """What GET gives: the setting, and why it cannot draw now."""
    return {**stored(), "problem": problem(_keys())}


SECTION = Section(SETTING, DEFAULTS, _images, current=stored, shown=shown)
