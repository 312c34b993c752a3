"""Request body size limits, enforced before a route reads (or parses) the body."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from linkmem.errors import TooLarge
from linkmem.server.errors import error_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Routes that take a whole file as their body, and get the upload limit instead.
UPLOAD_PATHS = ("/v1/import", "/v1/restore")


class BodyLimit:
    """Answers 413 ``too_large`` when a body's declared or streamed size passes the limit.

    A streamed body that grows past it raises ``TooLarge`` inside the app, so the route
    stops reading and the error handlers answer 413 (nothing was written yet)."""

    def __init__(self, app: ASGIApp, max_body: int, max_upload: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_upload = max_upload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_upload if scope["path"] in UPLOAD_PATHS else self.max_body
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _refuse(send, limit)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise TooLarge(_message(limit))
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except TooLarge:
            if not started:
                await _refuse(send, limit)


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps(error_body(TooLarge.code, _message(limit))).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _message(limit: int) -> str:
    return (
        f"the request body is larger than this server accepts ({limit} bytes); send less per "
        "request (or raise server.max_body_mb / server.max_upload_mb)"
    )
