"""The one place where exceptions become HTTP answers: ``{"error": {"code", "message"}}``.

``LinkmemError`` subclasses carry their status and stable code (``linkmem.errors``); a
request that does not match a route's schema is 422 ``invalid_request``; anything else is a
500 ``internal`` whose traceback goes to the server log, never into the response.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from linkmem.errors import InvalidRequest, LinkmemError

log = logging.getLogger("linkmem.server")

#: Codes of the errors Starlette raises itself (unknown route, wrong method).
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def error_body(code: str, message: str) -> dict[str, Any]:
    """The error answer; a lone surrogate echoed from the input is escaped, so the answer
    is always valid UTF-8 JSON."""
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return {"error": {"code": code, "message": message}}


def error_response(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers or None)


def _linkmem_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LinkmemError)
    if exc.http_status >= 500 and exc.http_status != 503:  # 503: not ready, or store down
        log.error("%s %s failed: %s", request.method, request.url.path, exc)
    headers = {"WWW-Authenticate": "Bearer"} if exc.http_status == 401 else {}
    return error_response(exc.http_status, exc.code, str(exc), **headers)


def _where(loc: tuple[Any, ...]) -> str:
    parts = [_cut(str(p)) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def _cut(text: str, limit: int = 60) -> str:
    """A field name as shown in a message: an unknown one may be as long as the body."""
    return text if len(text) <= limit else text[:limit] + "..."


def describe_validation(errors: list[dict[str, Any]]) -> str:
    """Pydantic's errors as one line: ``top_k: Input should be a valid integer; ...``."""
    lines = []
    for error in errors[:5]:
        message = str(error.get("msg", "invalid"))
        if error.get("type") == "extra_forbidden":
            message = "unknown field; remove it (see /docs for the fields this route takes)"
        elif error.get("type") == "json_invalid":
            where = f"at character {error['loc'][-1]}" if len(error.get("loc", ())) > 1 else ""
            why = error.get("ctx", {}).get("error", "")
            lines.append(f"the body is not valid JSON ({why} {where}".rstrip() + ")")
            continue
        lines.append(f"{_where(tuple(error.get('loc', ())))}: {message}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(lines) + more


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    message = describe_validation(list(exc.errors()))
    return error_response(InvalidRequest.http_status, InvalidRequest.code, message)


def _unparsable(cause: BaseException) -> str:
    """Why FastAPI could not read a body as JSON (it answers a bare 400 otherwise)."""
    if isinstance(cause, UnicodeDecodeError):
        why = "it is not UTF-8 text"
    elif isinstance(cause, RecursionError):
        why = "it is nested too deeply; flatten it"
    elif isinstance(cause, ValueError) and "digits" in str(cause):
        why = "it holds an integer with too many digits; send it as a string"
    else:
        why = "it is not valid JSON"
    return f"body: the body could not be read as JSON: {why}"


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    cause = exc.__cause__
    if isinstance(cause, LinkmemError):  # TooLarge, raised while FastAPI read the body
        return _linkmem_error(request, cause)
    if exc.status_code == 400 and cause is not None:  # FastAPI could not parse the body
        return error_response(InvalidRequest.http_status, InvalidRequest.code, _unparsable(cause))
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else "request refused"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route {request.method} {request.url.path}; see /docs for the routes"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}; see /docs"
    return error_response(exc.status_code, code, message)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal", "internal server error; the server log has details")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(LinkmemError, _linkmem_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
