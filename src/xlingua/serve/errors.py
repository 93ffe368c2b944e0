"""Errors as JSON in the schema each family of clients reads: TEI's
{"error": "...", "error_type": "..."} on the routes TEI defines, OpenAI's
{"error": {"message", "type", "param", "code"}} everywhere else.

Handlers raise one APIError with xlingua's status and code; the route decides the body (and,
for TEI, the status its router gives that fault)."""
from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

log = logging.getLogger("xlingua.serve")

TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
         405: "invalid_request_error", 413: "invalid_request_error", 422: "invalid_request_error",
         429: "rate_limit_error", 500: "server_error", 503: "server_error"}

#: the routes of text-embeddings-inference's router that xlingua serves (`POST /` and
#: `/invocations` are its embedding route; `GET /` is the page and has no errors of its own)
TEI_ROUTES = frozenset({"/", "/invocations", "/embed", "/similarity", "/tokenize", "/info",
                        "/health", "/ping", "/metrics"})

#: TEI's status and error_type for xlingua's codes. Its router answers a batch over the limit
#: or a text over the model's length 422 (validation), a failed model call 424 (backend).
TEI = {"empty_input": (400, "empty"), "invalid_json": (422, "validation"),
       "too_many_items": (422, "validation"), "item_too_long": (422, "validation"),
       "body_too_large": (413, "validation"), "no_tokenizer": (422, "tokenizer"),
       "server_overloaded": (429, "overloaded"), "internal_error": (424, "backend")}


class APIError(Exception):
    def __init__(self, status: int, message: str, code: str, param: str | None = None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param
        self.headers = headers or {}


class ClientGone(Exception):
    """The client hung up before its answer was ready (its queued work is dropped)."""


def error_response(path: str, status: int, message: str, code: str | None,
                   param: str | None = None, headers: dict | None = None) -> JSONResponse:
    """The error in the schema of the family `path` belongs to."""
    if path in TEI_ROUTES:
        status, kind = TEI.get(code) or (status, "validation")
        body = {"error": message, "error_type": kind}
    else:
        body = {"error": {"message": message, "type": TYPES.get(status, "invalid_request_error"),
                          "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def _param(loc) -> str | None:
    """("body", "input", 3) -> "input[3]"."""
    parts = [p for p in loc if p != "body"]
    if not parts:
        return None
    out = str(parts[0])
    for p in parts[1:]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def install(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api(request: Request, exc: APIError):
        return error_response(request.url.path, exc.status, exc.message, exc.code, exc.param, exc.headers)

    @app.exception_handler(ClientGone)
    async def _gone(request: Request, exc: ClientGone):
        return error_response(request.url.path, 499, "client closed the request", "client_closed")

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        param = _param(first.get("loc", ()))
        if first.get("type") == "json_invalid":
            return error_response(request.url.path, 400, "the body is not valid JSON", "invalid_json")
        where = f"{param}: " if param else ""
        return error_response(request.url.path, 422, f"{where}{first.get('msg', 'invalid value')}",
                              "invalid_value", param)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
        return error_response(request.url.path, exc.status_code, str(exc.detail), code,
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.exception("internal error on %s", request.url.path)
        return error_response(request.url.path, 500, "internal server error", "internal_error")
