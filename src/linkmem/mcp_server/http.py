"""MCP over streamable HTTP at ``/mcp`` of ``linkmem serve``, with the REST routes' keys.

Every HTTP request to ``/mcp`` goes through :class:`KeyCheck` first, which resolves its caller
with ``linkmem.access`` exactly as a REST route does (``Authorization: Bearer <key>``; no key
needed while the store has none) and refuses it (401, 403, 503) before any MCP message is
read. The caller rides along in the request's ASGI scope; each tool call then asks
``caller.view(memory, role)`` for its ``Memory``, so a key reaches its tenant's scopes only,
``read`` keys cannot write, and a revoked key stops at its next request. The transport is
stateless (each POST stands alone, answered with JSON), so no MCP session outlives the key
that opened it and any worker of ``--workers N`` can answer any request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from linkmem.access import Caller, resolve_request_caller
from linkmem.errors import LinkmemError, Unauthorized
from linkmem.mcp_server.server import build_server
from linkmem.memory import Memory

#: The key of the ASGI scope where ``KeyCheck`` leaves the request's ``Caller``.
CALLER = "linkmem.caller"
_MB = 1024 * 1024


def resolve_http_caller(memory: Memory, headers: Headers) -> Caller:
    """The caller of one request, by the rules every HTTP face shares (``linkmem.access``)."""
    return resolve_request_caller(memory, headers.get("authorization"), headers.get("host"))


def refusal(error: LinkmemError) -> Response:
    """A JSON-RPC error with the error's HTTP status: the MCP client shows its message."""
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": str(error), "data": {"code": error.code}},
    }
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(error, Unauthorized) else None
    return Response(
        json.dumps(body), error.http_status, headers=headers, media_type="application/json"
    )


class KeyCheck:
    """ASGI wrapper of the MCP transport: resolves each request's caller, or refuses it."""

    def __init__(self, app: ASGIApp, memory: Memory) -> None:
        self.app = app
        self.memory = memory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:  # a key lookup reads the store: off the event loop
            caller = await anyio.to_thread.run_sync(resolve_http_caller, self.memory, headers)
        except LinkmemError as e:
            await refusal(e)(scope, receive, send)
            return
        await self.app({**scope, CALLER: caller}, receive, send)


class McpEndpoint:
    """The tools of ``memory`` as an ASGI app (``app``) to route ``/mcp`` to; ``running()``
    is its lifespan, to enter with the web app's."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.server = build_server(self.view_for)
        self.server.streamable_http_app(  # makes the session manager; its routes are unused
            stateless_http=True,
            json_response=True,
            max_request_body_size=int(memory.settings.server.max_body_mb * _MB),
            # Requests are checked by KeyCheck (keys, or loopback Host on an open store).
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.app = KeyCheck(StreamableHTTPASGIApp(self.server.session_manager), memory)

    def view_for(self, ctx: Context, role: str) -> Any:
        request = ctx.request_context.request
        caller = None if request is None else request.scope.get(CALLER)
        if caller is None:  # not through KeyCheck: never serve it
            raise Unauthorized("this MCP request has no resolved caller")
        return caller.view(self.memory, role)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield
