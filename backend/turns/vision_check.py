"""The image dead end: a message with an image, in a catalog where no model can see images."""
from __future__ import annotations

from backend.store import chats
from backend.store.files import kind_of


def no_model_sees(name: str) -> str:
    """The sentence for it (web/js/vision.js says the same in the composer)."""
    return (f"No model here can see images, so {name} cannot be sent. Turn vision on for a model "
            f"that can see them in Settings → Models, or remove the image.")


def refusal(files) -> str | None:
    """Why a send with these File rows is refused before its turn starts, or None.

    Only the dead end is refused here: with a model that can see somewhere, the turn saves
    the message and says to switch to it (backend/turns/attachments.py), so Retry can send it.
    """
    image = next((f for f in files if kind_of(f.mime) == "image"), None)
    if image is None:
        return None
    return None if chats.any_model_sees() else no_model_sees(image.name)
