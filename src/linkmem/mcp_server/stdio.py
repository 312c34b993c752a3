"""``linkmem mcp``: the tools over stdio, for one local client (Claude Desktop, Cursor, ...).

The client waits for the answer to ``initialize`` before it shows the server as ready, so the
models are not loaded first: a background thread loads them (``Memory.warm_up``) while the
server answers, and a tool call that comes sooner waits for them inside the call. stdout
carries JSON-RPC only (the SDK's transport moves anything else written there to stderr);
logs go to stderr.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from linkmem.errors import LinkmemError
from linkmem.mcp_server.scope import BoundScope
from linkmem.mcp_server.server import build_server
from linkmem.memory import Memory

log = logging.getLogger("linkmem.mcp")


def _warm_up(memory: Memory) -> None:
    try:
        memory.warm_up()
    except LinkmemError as e:  # the tool calls that need the model will say so themselves
        log.warning("could not load the models: %s", e)


def serve_stdio(memory: Memory, scope: BoundScope) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    view = scope.view(memory)

    @asynccontextmanager
    async def warm_up_at_start(_: Any) -> AsyncIterator[dict[str, Any]]:
        # Runs once the transport holds stdout, so nothing the loading prints can reach it.
        thread = threading.Thread(target=_warm_up, args=(memory,), name="linkmem-warm-up")
        thread.daemon = True
        thread.start()
        yield {}

    server = build_server(lambda ctx, role: view, lifespan=warm_up_at_start)
    anyio.run(server.run_stdio_async)
