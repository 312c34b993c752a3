"""The tools in process (the SDK's in-memory client, the test models): the scope a stdio
server is bound to, what the results read like, and the HTTP endpoint's own checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from helpers import CapitalisedWordsExtractor
from mcp import Client
from mcp_checks import DOG, ids, ok, refused, text
from starlette.datastructures import Headers

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.errors import InvalidInput, PermissionDenied
from linkmem.mcp_server.http import McpEndpoint, resolve_http_caller
from linkmem.mcp_server.scope import BoundScope
from linkmem.mcp_server.server import build_server


@pytest.fixture
def memory(tmp_path) -> Memory:
    with Memory(
        tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
    ) as memory:
        yield memory


def run_with(server: Any, scenario: Callable[[Any], Any]) -> None:
    async def main() -> None:
        async with Client(server) as client:
            await scenario(client.call_tool)

    anyio.run(main)


def bound(memory: Memory, user: str | None, agent: str | None = None, run: str | None = None):
    view = BoundScope.of(user, agent, run).view(memory)
    return build_server(lambda ctx, role: view)


def test_a_run_bound_server_stays_in_its_run(memory: Memory):
    memory.add("Max is in the other run", user_id="alice", run_id="r0")

    async def scenario(call) -> None:
        [dog] = ids(await call("add_memory", {"text": DOG}))
        assert memory.get(dog)["run_id"] == "r1" and memory.get(dog)["user_id"] == "alice"
        assert [r["memory"] for r in ok(await call("list_memories", {}))["results"]] == [DOG]
        refused(await call("list_memories", {"run_id": "r0"}), "bound to run_id='r1'")
        refused(await call("search_memory", {"query": "Max", "user_id": "bob"}), "user_id")
        other = memory.get_all(user_id="alice", run_id="r0")["results"][0]["id"]
        refused(await call("get_memory", {"memory_id": other}), "no memory with id")
        refused(await call("delete_memory", {"memory_id": other}), "no memory with id")

    run_with(bound(memory, "alice", run="r1"), scenario)


def test_an_agent_bound_server_narrows_to_users(memory: Memory):
    async def scenario(call) -> None:
        await call("add_memory", {"text": "Ana likes tea", "user_id": "ana"})
        await call("add_memory", {"text": "Ben likes coffee", "user_id": "ben"})
        rows = ok(await call("list_memories", {"user_id": "ana"}))["results"]
        assert [(r["memory"], r["agent_id"]) for r in rows] == [("Ana likes tea", "coach")]
        refused(await call("list_memories", {"agent_id": "other"}), "agent_id")

    run_with(bound(memory, None, "coach"), scenario)


def test_results_read_as_compact_text(memory: Memory):
    async def scenario(call) -> None:
        messages = [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": DOG},
            {"role": "assistant", "content": "Max and Lisbon noted"},
        ]
        added = await call("add_memory", {"messages": messages, "metadata": {"topic": "pets"}})
        assert text(added).startswith("Added 2 memories:\n- ")
        assert '{"topic":"pets"}' in text(added)
        found = text(await call("search_memory", {"query": "Max dog", "explain": True}))
        assert found.startswith("2 found, best first:\n- [") and "    parts: dense " in found
        entities = text(await call("list_entities", {}))
        assert entities.startswith("2 entities:\n- Max (PROPER, 2 memories) id=")
        related = text(await call("related_entities", {"entity": "Max"}))
        assert related == "Sharing memories with Max:\n- Lisbon (PROPER): 1 shared"
        assert text(await call("search_memory", {"query": "zebra", "filters": {"x": 1}})) == (
            "No memory matches."
        )

    run_with(bound(memory, "alice"), scenario)


def test_an_http_tool_call_needs_a_resolved_caller(memory: Memory):
    async def scenario(call) -> None:
        refused(await call("list_memories", {"user_id": "alice"}), "no resolved caller")

    run_with(McpEndpoint(memory).server, scenario)


@pytest.mark.parametrize(
    ("host", "served"),
    [
        ("127.0.0.1:8765", True),
        ("localhost:8765", True),
        ("[::1]:8765", True),
        ("evil.example:8765", False),
        ("", False),
    ],
)
def test_an_open_store_answers_only_loopback_hosts(memory: Memory, host: str, served: bool):
    headers = Headers({"host": host})
    if served:
        assert resolve_http_caller(memory, headers).role == "admin"
    else:
        with pytest.raises(PermissionDenied, match="127.0.0.1 or localhost"):
            resolve_http_caller(memory, headers)
    _, secret = memory.keys.create("user:alice", "write")
    keyed = Headers({"host": host, "authorization": f"Bearer {secret}"})
    assert resolve_http_caller(memory, keyed).tenant.user_id == "alice"


def test_a_bound_scope_checks_its_ids():
    assert BoundScope.of("alice", None, " r1 ").ids() == {"user_id": "alice", "run_id": "r1"}
    for bad in [("*", None, None), ("alice", None, "a b")]:
        with pytest.raises(InvalidInput):
            BoundScope.of(*bad)
