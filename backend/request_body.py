"""A request's JSON body, read strictly: what the routes and the features' routes check fields of."""
from __future__ import annotations

from flask import request

from backend import json_input
from backend.errors import ApiError, invalid


def json_body() -> dict:
    """The request's JSON object, read strictly (backend.json_input); an empty body counts as {}.

    A value JSON allows but Numi cannot keep (a lone surrogate, NaN, a number
    beyond 64 bits) is a 422 naming each place; a body that is not JSON, or
    nests too deep to read, is a 400.
    """
    raw = request.get_data(cache=True)
    if not raw:
        return {}
    if request.mimetype != "application/json":
        raise ApiError(415, "unsupported_media_type", "Send the request body as application/json.")
    try:
        data = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        if exc.kind == "syntax":
            raise ApiError(400, "bad_request", f"The request body is not valid JSON ({exc.message}). "
                           "Send one JSON object.") from None
        if exc.kind == "depth":
            raise ApiError(400, "bad_request", f"The request body nests arrays and objects deeper than "
                           f"{json_input.MAX_DEPTH} levels. Send a flatter JSON object.") from None
        raise invalid({where or "body": why for where, why in exc.problems.items()}) from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid", "The request body must be a JSON object, like {\"name\": \"value\"}.",
                       {"body": "Send a JSON object, not a list or a single value."})
    return data
