"""Images the model draws (CONTRACT §11, §13): `image_generate`, with the backend Settings → Images chose.

`settings.images` (section.py) names the backend: the OpenAI images API of a catalog provider
through the `openai` SDK (openai_images.py: base64, partial images while a GPT image model
streams) or a Stable Diffusion server's `sdapi` (sdapi.py); draw.py picks one. Every answer is
read with caps and checked before it is decoded, then decoded once (picture.py, wire.py); a call
that gets no image Numi keeps is an error result with a sentence. A drawn image is a file (and
its thumbnail another), added to the assistant message whose step drew it (saving.py; the
message's `images`, carried by export and import as its files are: backend/store/
message_images.py), and announced as the `image` event (turn.py). Partial images are held in
memory a while and served by routes.py, which also lists a provider's image models. A message
sent with `image: true` is drawn from its own words, without the chat model (send_turn.py).
"""
from __future__ import annotations

from backend.features.images import routes, section, send_turn, tool, turn
from backend.features.images.service import ImagesService
from backend.turns.events import MODEL, Event
from backend.turns.features import Feature

FEATURE = Feature(
    name="images",
    service=ImagesService,
    routes=routes.register,
    settings=(section.SECTION,),
    tools=turn.offered,
    catalog=lambda: [tool.image_tool()],
    bind=turn.TurnImages,
    runs_turn=send_turn.run,  # a message sent with `image: true` is drawn (CONTRACT §13)
    events=(
        # CONTRACT §13: an image the turn drew, on the message that carries it (docs/PROTOCOL.md "Images":
        # which call, model and backend drew it, and its thumbnail's file, are Numi's additions).
        Event("image", {"message_id": int, "file_id": str, "prompt": str, "width": int, "height": int},
              {"call_id": str, "model": str, "backend": str, "thumbnail_file_id": str, **MODEL}, turn_id=str),
        # Numi's addition: a preview of the drawing in progress, while a streaming model sends them; `url`
        # serves it for a while (never kept). The final image follows as `image`.
        Event("image_partial", {"message_id": int, "call_id": str, "index": int, "url": str, "width": int,
                                "height": int}, MODEL, turn_id=str),
    ),
)
