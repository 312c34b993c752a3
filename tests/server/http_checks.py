"""Checks shared by the HTTP suites: the error body, the app's route table, counts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import httpx

from linkmem.server import create_app

#: JSON bodies above 0.05 MB (52,428 bytes) are refused with 413 by the suites' servers.
MAX_BODY_MB = 0.05
#: Uploads (/v1/import, /v1/restore) above 0.2 MB are refused with 413.
MAX_UPLOAD_MB = 0.2

Route = tuple[str, str]  # (method, path template)


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    """``response`` is ``status`` with exactly ``{"error": {"code": code, "message"}}``, a
    clear message (no traceback); returns the message."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code, body
    message = body["error"]["message"]
    assert isinstance(message, str) and message.strip(), body
    assert "Traceback" not in message and 'File "' not in message, message
    return message


def _leaves(routes: Iterable[Any]) -> Iterator[Any]:
    for route in routes:
        if hasattr(route, "effective_candidates"):  # a router included by FastAPI
            yield from _leaves(route.effective_candidates())
        else:
            yield route


def route_table(memory: Any) -> set[Route]:
    """Every (method, path) the server app answers (HEAD aside)."""
    app = create_app(memory)
    return {
        (method, route.path)
        for route in _leaves(app.routes)
        for method in getattr(route, "methods", None) or ()
        if method != "HEAD"
    }


def store_size(api: Any) -> dict[str, int]:
    """Memories and entities in the whole store, and the active keys (read with the admin key)."""
    status = api.ok("GET", "/v1/status")["store"]
    keys = api.ok("GET", "/v1/keys")["results"]
    return {
        "memories": api.ok("GET", "/v1/memories/count")["count"],
        "entities": int(status["entities"]),
        "status_memories": int(status["memories"]),
        "keys": len(keys),
    }
