"""MCP over streamable HTTP at ``/mcp`` of a real ``linkmem serve`` (SQLite and PostgreSQL),
driven by the SDK's own client: the tools, their errors, and the REST routes' keys and
tenants."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_checks import (
    DOG,
    KeyedUser,
    McpHttpServer,
    http_client,
    ids,
    ok,
    raised,
    refused,
    text,
)

from linkmem.mcp_server.descriptions import TOOLS


def test_tools_are_listed(mcp_server: McpHttpServer, alice: KeyedUser):
    async def main() -> list[str]:
        async with http_client(mcp_server.url, alice.secret) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert anyio.run(main) == list(TOOLS)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026 requests; the initialize handshake
def test_add_search_update_delete(mcp_server: McpHttpServer, alice: KeyedUser, mode: str):
    async def main() -> None:
        async with http_client(mcp_server.url, alice.secret, mode) as client:
            call = client.call_tool
            [dog] = ids(await call("add_memory", {"text": DOG, "metadata": {"topic": "pets"}}))
            await call(
                "add_memory", {"messages": [{"role": "user", "content": "I live in Lisbon"}]}
            )

            found = await call("search_memory", {"query": "how is my dog?", "explain": True})
            best = ok(found)["results"][0]
            assert best["id"] == dog and best["memory"] == DOG and "score_details" in best
            assert dog in text(found) and "parts:" in text(found)

            about = ok(await call("entity_memories", {"entity": "Max"}))
            assert about["entity"]["entity"] == "Max" and [r["id"] for r in about["results"]] == [
                dog
            ]

            updated = await call("update_memory", {"memory_id": dog, "text": "Max is 4 years old"})
            assert ok(updated)["results"][0]["memory"] == "Max is 4 years old"
            assert ok(await call("get_memory", {"memory_id": dog}))["metadata"] == {"topic": "pets"}

            assert ids(await call("delete_memory", {"memory_id": dog})) == [dog]
            refused(await call("get_memory", {"memory_id": dog}), "no memory with id")
            assert len(ids(await call("list_memories", {}))) == 1

    anyio.run(main)


def test_bad_arguments_are_tool_errors(mcp_server: McpHttpServer, alice: KeyedUser):
    async def main() -> None:
        async with http_client(mcp_server.url, alice.secret) as client:
            call = client.call_tool
            refused(await call("search_memory", {}), "search_memory", "query")
            refused(await call("search_memory", {"query": "x", "top_k": "many"}), "top_k")
            refused(await call("search_memory", {"query": "x", "top_k": 0}), "top_k")
            refused(await call("search_memory", {"query": "x", "userid": "u"}), "userid")
            refused(await call("add_memory", {}), "pass text")
            refused(await call("add_memory", {"text": "x", "metadata": "pets"}), "metadata")
            refused(await call("add_memory", {"text": "  "}), "empty")
            refused(await call("list_entities", {"order": "size"}), "order")
            refused(await call("entity_memories", {"entity": "Nobody"}), "no entity")
            refused(await call("update_memory", {"memory_id": "nope", "text": "x"}), "no memory")

    anyio.run(main)


def test_a_key_never_reaches_another_tenant(
    mcp_server: McpHttpServer, alice: KeyedUser, bob: KeyedUser
):
    async def main() -> None:
        async with http_client(mcp_server.url, alice.secret) as client:
            [dog] = ids(await client.call_tool("add_memory", {"text": DOG}))
        async with http_client(mcp_server.url, bob.secret) as client:
            call = client.call_tool
            await call("add_memory", {"text": "Rex is my cat"})
            found = ok(await call("search_memory", {"query": "how is my dog? Max", "top_k": 50}))
            assert dog not in {r["id"] for r in found["results"]}
            assert {r["memory"] for r in ok(await call("list_memories", {}))["results"]} == {
                "Rex is my cat"
            }
            names = {e["entity"] for e in ok(await call("list_entities", {}))["results"]}
            assert "Max" not in names and "Rex" in names
            refused(await call("entity_memories", {"entity": "Max"}), "no entity")
            refused(await call("related_entities", {"entity": "Max"}), "no entity")
            for name, args in [
                ("get_memory", {"memory_id": dog}),
                ("update_memory", {"memory_id": dog, "text": "mine now"}),
                ("delete_memory", {"memory_id": dog}),
            ]:
                refused(await call(name, args), "no memory with id")
            other = {"user_id": alice.user_id}
            for name, args in [
                ("search_memory", {"query": "dog", **other}),
                ("add_memory", {"text": "x", **other}),
                ("list_memories", other),
                ("entity_memories", {"entity": "Max", **other}),
            ]:
                refused(await call(name, args), "cannot reach user_id")
            refused(await call("search_memory", {"query": "x", "filters": {"user_id": "x"}}))
        async with http_client(mcp_server.url, alice.secret) as client:
            assert ok(await client.call_tool("get_memory", {"memory_id": dog}))["memory"] == DOG

    anyio.run(main)


def test_narrowing_by_agent_is_allowed(mcp_server: McpHttpServer, alice: KeyedUser):
    async def main() -> None:
        async with http_client(mcp_server.url, alice.secret) as client:
            call = client.call_tool
            await call("add_memory", {"text": "Max likes the beach", "agent_id": "coach"})
            await call("add_memory", {"text": "Max hates baths"})
            coach = ok(await call("list_memories", {"agent_id": "coach"}))["results"]
            assert [r["memory"] for r in coach] == ["Max likes the beach"]
            assert coach[0]["user_id"] == alice.user_id
            assert len(ids(await call("list_memories", {}))) == 2

    anyio.run(main)


def test_a_read_key_cannot_write(mcp_server: McpHttpServer, alice: KeyedUser):
    async def main() -> None:
        async with http_client(mcp_server.url, alice.read_secret) as client:
            refused(await client.call_tool("add_memory", {"text": DOG}), "role 'read'")
            assert ok(await client.call_tool("list_memories", {}))["results"] == []

    anyio.run(main)


@pytest.mark.parametrize("secret", [None, "lmk_" + "x" * 43], ids=["no key", "unknown key"])
def test_a_request_without_a_valid_key_is_refused(mcp_server: McpHttpServer, secret: str | None):
    async def main() -> None:
        async with http_client(mcp_server.url, secret):
            pass

    with pytest.raises(BaseException) as refusal:
        anyio.run(main)
    error = raised(refusal.value)
    assert isinstance(error, MCPError) and "API key" in str(error)
    headers = {} if secret is None else {"Authorization": f"Bearer {secret}"}
    response = httpx.post(
        mcp_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
    )
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert "API key" in response.json()["error"]["message"]


def test_a_revoked_key_stops_at_once(mcp_server: McpHttpServer, alice: KeyedUser):
    key, secret = mcp_server.memory.keys.create(f"user:{alice.user_id}", "write")

    async def main() -> None:
        async with http_client(mcp_server.url, secret) as client:
            ok(await client.call_tool("list_memories", {}))
            mcp_server.memory.keys.revoke(key.id)
            with pytest.raises(MCPError, match="revoked|API key"):
                await client.call_tool("list_memories", {})

    anyio.run(main)
