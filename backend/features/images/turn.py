"""The images feature's share of a chat's tools and turns: `image_generate`, offered and run.

A call draws, keeps the image on the assistant message whose step called it, and publishes `image`
{message_id, file_id, prompt, width, height, call_id, model, backend, thumbnail_file_id?}; a streaming
model's partial images go out first as `image_partial` (making.py, shared with an image send). A call
that gets no image (the backend failed, or what came back is no image Numi keeps) is an error
result with the sentence saying why, and nothing is kept or published.
"""
from __future__ import annotations

from backend.core.tools import ToolRegistry
from backend.core.types import ToolCall
from backend.features.images import draw, making, section, tool
from backend.features.images.wire import DrawFailed
from backend.store.db import short_connection
from backend.turns.features import Offer, TurnHandle, TurnPart


def offered(offer: Offer) -> list:
    """image_generate, to a model that calls tools, while an image backend is set and can draw."""
    if not offer.model_calls_tools:
        return []
    with short_connection():
        config = section.stored()
        usable = config["backend"] is not None and section.problem(offer.keys) is None
    return [tool.image_tool()] if usable else []


class TurnImages(TurnPart):
    """One turn's image_generate: each call draws, keeps and announces its image."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn
        self._call_id: str | None = None  # the call running now (tool_starting, then its run: one thread)

    def bind_tools(self, tools: ToolRegistry) -> None:
        if tools.get(tool.NAME) is not None:
            tools.add(tool.image_tool(self._generate))

    def tool_starting(self, call: ToolCall) -> None:
        if call.name == tool.NAME:
            self._call_id = call.id

    def _generate(self, args: dict, cancel) -> str:
        backend = draw.settings()["backend"]
        prompt, size = tool.arguments(args, backend)
        service = self.turn.service("images")
        if service is None:
            raise DrawFailed("Images cannot be drawn right now (the images feature did not start; Numi's log says "
                             "why). Answer without one and say so.")
        made = making.make(service, self.turn.publish, prompt, size, cancel, self.turn.message_id(), self._call_id)
        item = made.item
        return (f"Drew the image ({item['width']} x {item['height']} px, by {made.drawn.model}): file "
                f"{item['file_id']}. The person sees it in the chat with your prompt. Do not write it as a link or "
                f"as Markdown; say in words what you drew if that helps.")
