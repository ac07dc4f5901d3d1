"""API errors as the contract shapes them: {"error": {"code", "message", "fields"?}}."""
from __future__ import annotations

import logging

from flask import jsonify, request
from werkzeug.exceptions import HTTPException

from backend.store.db import is_busy_error

log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"No {what} with that id. It may have been deleted.")


def invalid(fields: dict[str, str]) -> ApiError:
    names = ", ".join(sorted(fields))
    return ApiError(422, "invalid", f"Some fields are not valid: {names}.", fields)


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    body = {"code": code, "message": message}
    if fields:
        body["fields"] = fields
    return {"error": body}


def init_app(app) -> None:
    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return jsonify(error_body(exc.code, exc.message, exc.fields)), exc.status

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        messages = {
            404: "There is nothing at this address.",
            405: "This address does not accept that method.",
            413: "The request is too large.",
        }
        message = messages.get(exc.code, exc.description or exc.name)
        return jsonify(error_body(exc.name.lower().replace(" ", "_"), message)), exc.code

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        if is_busy_error(exc):
            return jsonify(error_body(
                "db_busy", "The database is busy (another program holds it locked). "
                "Nothing was changed; try again in a moment.")), 503
        log.exception("unhandled error on %s %s", request.method, request.path)
        return jsonify(error_body("internal", "Something went wrong inside Numi; the details are in the log. "
                                  "Nothing saved was lost.")), 500
