"""The images feature over HTTP: a partial image while its drawing runs, and a provider's image models.

- `GET /api/images/partials/<id>` → a partial image's bytes (an `image_partial` event's `url`),
  served as `GET /api/files/{id}` serves an image: its type, inline, no sniffing, sandboxed;
  404 once it is no longer held (service.py).
- `POST /api/images/models` `{"provider_id"}` → `{"items": [{"api_model", "label"}]}`: the image
  models the provider's models endpoint lists (backend/catalog/discover.py), for Settings → Images
  to pick from. A POST because it reaches the network (as `POST /api/providers/{id}/discover`).
"""
from __future__ import annotations

from flask import Blueprint, Response, current_app

from backend.errors import ApiError, invalid, not_found
from backend.features.images import section
from backend.fields import Fields
from backend.request_body import json_body
from backend.turns import features

bp = Blueprint("images", __name__)


def _service():
    service = features.service(current_app, "images")
    if service is None:
        raise ApiError(503, "unavailable", "Images are not available right now (the images feature did not start; "
                                           "Numi's log says why).")
    return service


@bp.get("/api/images/partials/<partial_id>")
def partial(partial_id: str):
    held = _service().partial(partial_id)
    if held is None:
        raise not_found("partial image (it is kept only while its drawing runs)")
    response = Response(held.data, mimetype=held.mime)
    response.headers["Content-Disposition"] = "inline"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; sandbox"
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.post("/api/images/models")
def image_models():
    from backend.catalog.discover import DiscoveryError, Source, discover_all

    f = Fields(json_body(), ("provider_id",))
    provider_id = f.text("provider_id", max_len=200, required=True, non_empty=True, strip=True)
    f.check()
    found = section.provider(provider_id)
    if found is None:
        raise invalid({"provider_id": f"No provider with the id {provider_id!r}. Pick one from Settings → Providers."})
    if found.kind not in section.OPENAI_KINDS:
        raise invalid({"provider_id": f"{found.name} speaks Anthropic's API, which draws no images. Pick an OpenAI "
                                      f"or OpenAI-compatible provider."})
    keys = _service().keys
    if found.kind == "openai" and not keys.has(found.id):
        raise ApiError(409, "no_key", f"{found.name} has no API key yet. Add the key (Settings → Providers), then "
                                      f"look for its image models again.")
    source = Source(id=found.id, kind=found.kind, name=found.name, base_url=found.base_url,
                    api_key=keys.get(found.id), timeout=float(found.timeout))
    try:
        listed = discover_all(source)
    except DiscoveryError as exc:
        raise ApiError(502, "provider_error", exc.message) from None
    return {"items": listed.images}


def register(app) -> None:
    app.register_blueprint(bp)
