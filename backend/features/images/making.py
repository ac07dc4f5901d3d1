"""One image made from start to end, for a tool call (turn.py) and an image send (send_turn.py) alike:
drawn by the backend Settings → Images chose, its partial images announced as `image_partial` while
they stream, kept on its message (saving.py), and announced as `image`.

A drawing that gets no image raises DrawFailed or picture.NotAnImage with a sentence, and so does a
Stop that comes once the image is drawn but before it is kept: then nothing is kept or announced.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from backend.features.images import draw, picture, saving
from backend.features.images.wire import DrawFailed


def partial_url(partial_id: str) -> str:
    return f"/api/images/partials/{partial_id}"


@dataclass(frozen=True)
class Made:
    """A kept image: its message's `images` item, and what drew it."""
    item: dict
    drawn: draw.Drawn


def make(service, publish: Callable[..., dict], prompt: str, size: tuple[int, int] | str | None, cancel,
         message_id: int | None, call_id: str | None) -> Made:
    """Draw `prompt` at `size` (None: the setting's) with the images service's keys, keep it on
    `message_id` and announce it there as drawn by `call_id` (the events need both)."""

    def partial(index: int, shown: picture.Picture) -> None:
        if message_id is None or call_id is None:
            return
        held = service.hold_partial(shown.data, shown.mime)
        publish("image_partial", message_id=message_id, call_id=call_id, index=index, url=partial_url(held),
                width=shown.width, height=shown.height)

    drawn = draw.draw(service.keys, prompt, size, cancel, partial)
    if cancel.is_set():
        raise DrawFailed("Stopped before the image was kept; nothing was kept.")
    item = saving.keep(service.files, drawn.picture, prompt, drawn.model, drawn.backend, message_id)
    if message_id is not None:
        extra = {"thumbnail_file_id": item["thumbnail_file_id"]} if "thumbnail_file_id" in item else {}
        publish("image", message_id=message_id, file_id=item["file_id"], prompt=prompt, width=item["width"],
                height=item["height"], model=drawn.model, backend=drawn.backend,
                **({"call_id": call_id} if call_id else {}), **extra)
    return Made(item, drawn)
