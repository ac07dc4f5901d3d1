"""`image_generate` (CONTRACT §11, §13): the model draws an image with the backend Settings → Images chose.

Offered to a model that calls tools while an image backend is set and can draw; it runs without
asking (its `needs_approval` is False, the contract's default for it): it sends a description to
the image service the person chose and adds a picture to the chat, nothing else. Plan mode holds
it back, as it does doc_create: a plan proposes what to draw, and carrying it out draws (a drawing
adds to the chat and may cost money). The result tells the model the
image's file id; the picture itself reaches the person as the `image` event and the message's
`images`.
"""
from __future__ import annotations

from typing import Any, Callable

from backend.core.text import well_formed
from backend.core.tools import Tool
from backend.core.types import ToolSpec
from backend.features.images import section

NAME = "image_generate"
PROMPT_MAX = 32_000  # characters: the OpenAI images API's own limit for GPT image models

SPEC = ToolSpec(
    name=NAME,
    description=("Draw an image from a text description with the image model the person chose (Settings → "
                 "Images). The person sees the image in the chat, with your prompt and the model that drew it. "
                 "Describe the whole picture: subject, setting, style, composition, colours, any text it shows. "
                 "Drawing can take a minute. You get the image's file id back; do not write the image as a link "
                 "or as Markdown."),
    parameters={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "maxLength": PROMPT_MAX,
                       "description": "What to draw, as a full visual description."},
            "size": {"type": "string",
                     "description": ('Width x height in pixels, like "1024x1024" or "1536x1024"; leave it out for '
                                     "the size set in Settings → Images.")},
        },
        "required": ["prompt"],
    },
)


def _unbound(args: dict, cancel) -> str:
    raise ValueError("image_generate runs only inside a chat's turn.")


def image_tool(run: Callable[[dict, Any], str] = _unbound) -> Tool:
    # Not concurrent: one drawing at a time per turn, in the order the model asked for them, so each
    # image is added to its message after the one before. Not read-only: plan mode holds it back.
    return Tool(SPEC, run, concurrent=False, needs_approval=False, read_only=False, trimmed_arguments=("prompt",))


def arguments(args: dict, backend: str | None) -> tuple[str, tuple[int, int] | str | None]:
    """The call's prompt and size (None: the setting's); ValueError with a sentence the model can act on."""
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError('image_generate needs "prompt": a description of the image to draw.')
    prompt = well_formed(prompt.strip())  # a lone surrogate from the model's JSON could not be stored
    if len(prompt) > PROMPT_MAX:
        raise ValueError(f"The prompt is {len(prompt):,} characters long; describe the image in at most "
                         f"{PROMPT_MAX:,}.")
    size = args.get("size")
    if size is None or (isinstance(size, str) and not size.strip()):
        return prompt, None
    try:
        return prompt, section.parse_size(size, backend)
    except ValueError as exc:
        raise ValueError(f'"size" {exc.args[0][0].lower()}{exc.args[0][1:]}') from None
