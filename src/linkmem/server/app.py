"""The FastAPI app around one ``Memory``: routes, error mapping, limits, metrics, warm-up."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from linkmem import __version__
from linkmem.errors import LinkmemError
from linkmem.mcp_server.http import McpEndpoint
from linkmem.memory import Memory
from linkmem.server import ui
from linkmem.server.errors import install_error_handlers
from linkmem.server.limits import BodyLimit
from linkmem.server.metrics import Metrics, MetricsMiddleware
from linkmem.server.routes import admin, entities, mem0, memories, probes

_MB = 1024 * 1024


class WarmUp:
    """Loads the models in the background, so ``/v1/health`` answers at once and
    ``/v1/ready`` says when the first request will not pay for loading them."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.done = threading.Event()
        self.error: LinkmemError | None = None

    def start(self) -> None:
        threading.Thread(target=self._run, name="linkmem-warm-up", daemon=True).start()

    def _run(self) -> None:
        try:
            self.memory.warm_up()
        except LinkmemError as e:
            self.error = e
        finally:
            self.done.set()


def create_app(memory: Memory, *, close_memory: bool = False) -> FastAPI:
    """The server app for ``memory`` (limits come from ``memory.settings.server``), with
    MCP at ``/mcp``; ``close_memory=True`` closes it when the app shuts down."""
    mcp = McpEndpoint(memory)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.warm_up.start()
        async with mcp.running():  # the MCP transport's task group
            yield
        if close_memory:
            memory.close()

    app = FastAPI(
        title="linkmem",
        version=__version__,
        summary="Long-term memory for AI agents, with entity linking.",
        lifespan=lifespan,
    )
    app.state.memory = memory
    app.state.warm_up = WarmUp(memory)
    app.state.metrics = Metrics(memory)
    install_error_handlers(app)
    for module in (memories, entities, admin, probes, mem0):
        app.include_router(module.router)
    app.include_router(ui.router)  # the memory explorer at /ui/
    app.add_route("/mcp", mcp.app, include_in_schema=False)  # MCP, same keys (mcp_server.http)
    limits = memory.settings.server
    app.add_middleware(
        BodyLimit,
        max_body=int(limits.max_body_mb * _MB),
        max_upload=int(limits.max_upload_mb * _MB),
    )
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)  # outermost: counts 413s
    return app
