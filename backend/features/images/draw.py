"""One drawing by the backend Settings → Images chose (section.py): `openai` or `sdapi`.

The provider of an `openai` backend is read from the catalog at each drawing, with its key from
the keyring (as every provider call gets it), so a changed URL or key applies to the next one.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.core.types import ProviderConfig
from backend.features.images import openai_images, picture, sdapi, section
from backend.features.images.wire import DrawFailed
from backend.store.db import short_connection


@dataclass(frozen=True)
class Drawn:
    """A checked image and what drew it."""
    picture: picture.Picture
    model: str  # the model (or checkpoint) that drew it, as the person knows it
    backend: str  # openai | sdapi


def settings() -> dict:
    with short_connection():
        return section.stored()


def provider_of(config: dict, keys) -> ProviderConfig:
    """The `openai` backend's provider as the catalog has it now, with its key; DrawFailed when it cannot draw."""
    with short_connection():
        found = section.provider(config["provider_id"])
        problem = section.problem(keys)
    if found is None or problem is not None:
        raise DrawFailed(problem or "The provider chosen for images is no longer in the catalog. Pick another in "
                                    "Settings → Images.")
    return ProviderConfig(id=found.id, name=found.name, kind=found.kind, base_url=found.base_url,
                          api_key=keys.get(found.id) if keys is not None else None, timeout=float(found.timeout))


def draw(keys, prompt: str, size: tuple[int, int] | str | None, cancel,
         partial: openai_images.Partial | None = None) -> Drawn:
    """The image the chosen backend draws for `prompt` at `size` (None: the setting's, else the
    backend's own default); DrawFailed or picture.NotAnImage with a sentence."""
    config = settings()
    backend = config["backend"]
    if backend is None:
        raise DrawFailed("No image backend is set (Settings → Images), so nothing can be drawn.")
    if size is None and config["size"]:
        size = section.parse_size(config["size"], backend)
    if backend == "openai":
        model = config["model"]
        if not model:
            raise DrawFailed("Settings → Images names no image model. Pick one there.")
        provider = provider_of(config, keys)
        text = section.size_text(size) if size is not None else None
        return Drawn(openai_images.draw(provider, model, prompt, text, cancel, partial), model, backend)
    if isinstance(size, str):  # "auto" is OpenAI's; a Stable Diffusion server takes pixels
        size = None
    image, model = sdapi.draw(config["url"], config["model"], prompt, size, cancel)
    return Drawn(image, model, backend)
