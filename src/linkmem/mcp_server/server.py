"""The MCP server around the tools: the SDK's ``MCPServer``, with argument errors a model can
act on and the process's logging left alone."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import ValidationError

from linkmem import __version__
from linkmem.mcp_server.descriptions import INSTRUCTIONS
from linkmem.mcp_server.tools import ViewFor, build_tools

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


def describe_arguments(tool: str, error: ValidationError) -> str:
    """Pydantic's complaint about a tool's arguments as one line for the model."""
    problems = [
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in error.errors()[:5]
    ]
    return f"invalid arguments for {tool}: " + "; ".join(problems)


class LinkmemMCP(MCPServer):
    """The SDK's server, with argument errors a model can act on: an unknown argument is
    named (the SDK would ignore it) and a wrong one is one line, not pydantic's report."""

    def __init__(self, tools: list[Tool], lifespan: Lifespan | None = None) -> None:
        self.arguments = {t.name: frozenset(t.parameters.get("properties", {})) for t in tools}
        with _keep_root_logging():
            super().__init__(
                "linkmem",
                instructions=INSTRUCTIONS,
                version=__version__,
                tools=tools,
                lifespan=lifespan,
            )

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments) - self.arguments.get(name, set(arguments)))
        if unknown:
            takes = ", ".join(sorted(self.arguments[name]))
            raise ToolError(f"{name} has no argument {', '.join(unknown)}; it takes: {takes}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(describe_arguments(name, e.__cause__)) from e.__cause__
            raise


@contextmanager
def _keep_root_logging() -> Iterator[None]:
    """The SDK configures the root logger when a server is made (``logging.basicConfig``);
    the process that runs linkmem decides that, so it is put back as it was."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def build_server(view_for: ViewFor, lifespan: Lifespan | None = None) -> LinkmemMCP:
    """The MCP server whose tools use ``view_for`` to reach memory; ``lifespan`` runs
    around the server's life (see ``MCPServer``)."""
    return LinkmemMCP(build_tools(view_for), lifespan)
