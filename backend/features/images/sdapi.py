"""The `sdapi` image backend: Automatic1111's `POST <url>/sdapi/v1/txt2img`, which Forge and
stable-diffusion.cpp's server speak too.

The request is `{"prompt", "width", "height", "batch_size": 1, "n_iter": 1, "send_images": true,
"save_images": false}`, plus `override_settings.sd_model_checkpoint` when Settings → Images names a
model; the answer `{"images": [base64 PNG, …], "parameters", "info"}` (`info` a JSON text naming
`sd_model_name`). The url is the one the person typed in Settings → Images, so it may be on this
computer or their network. The answer is read in capped chunks (wire.py) and its first image
checked (picture.py).
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from backend.core.text import well_formed
from backend.features.images import picture, wire
from backend.features.images.wire import DrawFailed

PATH = "/sdapi/v1/txt2img"
DEFAULT_SIZE = (512, 512)  # Automatic1111's own default
NAME = "Stable Diffusion"


def endpoint(url: str) -> str:
    """The txt2img address of a server's base address (a pasted …/sdapi/v1 or …/txt2img is taken too)."""
    base = url.rstrip("/")
    for tail in (PATH, "/sdapi/v1", "/sdapi"):
        if base.endswith(tail):
            base = base[: -len(tail)]
            break
    return base + PATH


def draw(url: str, model: str | None, prompt: str, size: tuple[int, int] | None, cancel) -> tuple[picture.Picture, str]:
    """The image the server draws for `prompt`, checked, and the model that drew it."""
    import httpx2

    width, height = size or DEFAULT_SIZE
    body: dict = {"prompt": prompt, "width": width, "height": height, "batch_size": 1, "n_iter": 1,
                  "send_images": True, "save_images": False}
    if model:
        body["override_settings"] = {"sd_model_checkpoint": model}
    target = endpoint(url)
    host = urlsplit(target).netloc or target
    what = f"The image from {host}"
    guard = wire.Guard(cancel, wire.timeout_s())
    try:
        with guard.client().stream("POST", target, json=body, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise _status(response, host, target)
            raw = wire.read_capped(response.iter_bytes(), response.headers.get("content-length"),
                                   wire.body_cap(), what)
        answer = wire.json_answer(raw, what)
        del raw  # the base64 is in `answer` now: not held twice
        images = answer.get("images")
        if not isinstance(images, list) or not images:
            raise DrawFailed(f"{host} answered without an image{wire.said(wire.upstream_message(answer))}")
        drawn_by = model or _model_in(answer.get("info")) or NAME
        data = picture.from_base64(images[0], what)
        del answer, images
        return picture.check(data, what), drawn_by
    except (DrawFailed, picture.NotAnImage):
        if guard.why is not None:
            raise _cut(guard, host) from None
        raise
    except httpx2.HTTPError as exc:
        raise _failure(exc, guard, host, target) from None
    finally:
        guard.close()


def _status(response, host: str, target: str) -> DrawFailed:
    status = response.status_code
    try:
        said = wire.said(wire.upstream_message(wire.read_capped(response.iter_bytes(), None,
                                                                wire.ERROR_BODY_BYTES, "")))
    except picture.NotAnImage:
        said = "."
    if status == 404:
        return DrawFailed(f"{host} has no Stable Diffusion API at {target} (HTTP 404). Start Automatic1111 or Forge "
                          f"with --api (or stable-diffusion.cpp's sd-server), and check the address in "
                          f"Settings → Images.")
    if status in (401, 403):
        return DrawFailed(f"{host} refused the request (HTTP {status}){said} Numi sends no password to it: turn "
                          f"off its API authentication, or use another server.")
    if 400 <= status < 500:
        return DrawFailed(f"{host} refused to draw this (HTTP {status}){said} Change the prompt or the size, then "
                          f"try again.")
    return DrawFailed(f"{host} failed while drawing (HTTP {status}){said} Try again later.")


def _model_in(info) -> str | None:
    """The checkpoint Automatic1111's `info` (a JSON text) names, if any."""
    try:
        parsed = json.loads(info) if isinstance(info, str) and len(info) < 1_000_000 else info
    except ValueError:
        return None
    name = parsed.get("sd_model_name") if isinstance(parsed, dict) else None
    return well_formed(" ".join(name.split()))[:200] or None if isinstance(name, str) else None


def _cut(guard: wire.Guard, host: str) -> DrawFailed:
    """Stop, or the time cap (a read timeout is the cap too: the client's is as long)."""
    if guard.why == "stopped":
        return DrawFailed("Stopped before the image was finished; nothing was kept.")
    return DrawFailed(f"{host} did not finish the image within {guard.timeout:g} s, the most Numi waits for one; "
                      f"nothing was kept. Try again, or ask for a smaller image or fewer steps.")


def _failure(exc: Exception, guard: wire.Guard, host: str, target: str) -> DrawFailed:
    import httpx2

    if guard.why is not None:
        return _cut(guard, host)
    if isinstance(exc, httpx2.ConnectError):
        return DrawFailed(f"Nothing answered at {target}. Check that the Stable Diffusion server is running with its "
                          f"API on, and the address in Settings → Images.")
    if isinstance(exc, httpx2.TimeoutException):
        return _cut(guard, host)
    return DrawFailed(f"The connection to {host} broke while the image came ({type(exc).__name__}); nothing was "
                      f"kept. Try again.")
