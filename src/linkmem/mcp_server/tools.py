"""The MCP tools: each one resolves the caller's view of ``Memory``, makes one call and returns
compact text for the model plus the call's JSON as structured content.

Who the caller is and what it may reach is not decided here: ``view_for(ctx, role)`` returns
the ``Memory`` view to use (the stdio server's pinned scope, or the view of an HTTP request's
API key through ``linkmem.access``), and the view refuses a widening scope id itself. A
``LinkmemError`` becomes a tool error with the library's message; nothing else reaches the
model (the SDK answers an unexpected exception with a generic error and logs it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from linkmem.errors import InvalidInput, LinkmemError
from linkmem.mcp_server import render
from linkmem.mcp_server.descriptions import ARGS, TOOLS
from linkmem.mcp_server.schema import compact_schema

#: ``(ctx, role) -> view``: the ``Memory`` (or tenant view) a call with this context may use
#: for a call needing ``role`` ("read" or "write"); raises a ``LinkmemError`` to refuse.
ViewFor = Callable[[Context, str], Any]
Result = dict[str, Any]


def _arg(kind: Any, name: str) -> Any:
    return Annotated[kind, Field(description=ARGS[name])]


UserId = _arg(str | None, "user_id")
AgentId = _arg(str | None, "agent_id")
RunId = _arg(str | None, "run_id")
MemoryId = _arg(str, "memory_id")
Entity = _arg(str, "entity")
Text = _arg(str | None, "text")
Messages = _arg(list[dict[str, str]] | None, "messages")
Metadata = _arg(dict[str, Any] | None, "metadata")
Timestamp = _arg(str | None, "timestamp")
Query = _arg(str, "query")
TopK = _arg(int, "top_k")
Filters = _arg(dict[str, Any] | None, "filters")
Explain = _arg(bool, "explain")
Limit = _arg(int, "limit")
Offset = _arg(int, "offset")
Order = _arg(Literal["links", "text", "recent"], "order")


def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, Any]:
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}


def _text_or_messages(text: str | None, messages: list[dict[str, str]] | None) -> Any:
    if (text is None) == (messages is None):
        raise InvalidInput("pass text (one memory) or messages (a list of chat messages)")
    return text if messages is None else messages


def error_result(error: LinkmemError) -> CallToolResult:
    """A tool error carrying the library's message (and its stable code, as the REST
    server's error body does)."""
    message = str(error).encode("utf-8", "backslashreplace").decode("utf-8")
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"error": {"code": error.code, "message": message}},
        is_error=True,
    )


class MemoryTools:
    """One method per tool; the signatures are the tools' input schemas. The calls by id
    take no scope: the caller's view checks the memory's scope itself (another tenant's id
    is not found)."""

    def __init__(self, view_for: ViewFor) -> None:
        self.view_for = view_for

    def _run(
        self,
        ctx: Context,
        role: str,
        call: Callable[[Any], Result],
        show: Callable[[Result], str],
    ) -> CallToolResult:
        try:
            result = call(self.view_for(ctx, role))
        except LinkmemError as e:
            return error_result(e)
        return CallToolResult(
            content=[TextContent(type="text", text=show(result))], structured_content=result
        )

    def add_memory(
        self,
        ctx: Context,
        text: Text = None,
        messages: Messages = None,
        metadata: Metadata = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        timestamp: Timestamp = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx,
            "write",
            lambda m: m.add(
                _text_or_messages(text, messages), metadata=metadata, timestamp=timestamp, **scope
            ),
            render.added,
        )

    def search_memory(
        self,
        ctx: Context,
        query: Query,
        top_k: TopK = 5,
        filters: Filters = None,
        explain: Explain = False,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx,
            "read",
            lambda m: m.search(query, top_k=top_k, filters=filters, explain=explain, **scope),
            render.hits,
        )

    def list_memories(
        self,
        ctx: Context,
        limit: Limit = 20,
        offset: Offset = 0,
        filters: Filters = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx,
            "read",
            lambda m: m.get_all(limit=limit, offset=offset, filters=filters, **scope),
            render.memories,
        )

    def get_memory(self, ctx: Context, memory_id: MemoryId) -> CallToolResult:
        return self._run(ctx, "read", lambda m: m.get(memory_id), render.memory)

    def update_memory(
        self, ctx: Context, memory_id: MemoryId, text: Text = None, metadata: Metadata = None
    ) -> CallToolResult:
        return self._run(
            ctx, "write", lambda m: m.update(memory_id, text, metadata), render.updated
        )

    def delete_memory(self, ctx: Context, memory_id: MemoryId) -> CallToolResult:
        return self._run(ctx, "write", lambda m: m.delete(memory_id), render.deleted)

    def list_entities(
        self,
        ctx: Context,
        limit: Limit = 50,
        offset: Offset = 0,
        order: Order = "links",
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx,
            "read",
            lambda m: m.entities(order=order, limit=limit, offset=offset, **scope),
            render.entities,
        )

    def entity_memories(
        self,
        ctx: Context,
        entity: Entity,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx, "read", lambda m: m.entity_memories(entity, **scope), render.entity_memories
        )

    def related_entities(
        self,
        ctx: Context,
        entity: Entity,
        limit: Limit = 10,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
    ) -> CallToolResult:
        scope = _scope(user_id, agent_id, run_id)
        return self._run(
            ctx,
            "read",
            lambda m: m.related_entities(entity, limit=limit, **scope),
            render.related,
        )


#: The tools that only read (``readOnlyHint``); the others write.
READ_ONLY = frozenset(
    {
        "search_memory",
        "list_memories",
        "get_memory",
        "list_entities",
        "entity_memories",
        "related_entities",
    }
)


def build_tools(view_for: ViewFor) -> list[Tool]:
    """The tools, in the order clients list them, with compact input schemas."""
    methods = MemoryTools(view_for)
    tools = []
    for name, description in TOOLS.items():
        tool = Tool.from_function(
            getattr(methods, name),
            name=name,
            description=description,
            annotations=ToolAnnotations(read_only_hint=name in READ_ONLY),
            structured_output=False,
        )
        tools.append(tool.model_copy(update={"parameters": compact_schema(tool.parameters)}))
    return tools
