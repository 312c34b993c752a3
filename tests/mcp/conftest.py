"""A real ``linkmem serve`` per backend (SQLite; PostgreSQL 18) for the MCP-over-HTTP suite.

Its store has API keys, created while it runs by an embedded ``Memory`` on the same settings
(as ``linkmem keys create`` does), so ``/mcp`` requires a key. Each test makes tenants of its
own (fresh user ids, each with its keys) instead of resetting the shared store.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from helpers import CapitalisedWordsExtractor
from mcp_checks import KeyedUser, McpHttpServer
from server_fixtures import SERVER_BACKENDS, ServerProcess, store_settings

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder


@pytest.fixture(scope="session", params=SERVER_BACKENDS)
def mcp_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpHttpServer]:
    home = tmp_path_factory.mktemp(f"mcp-{request.param}")
    settings = store_settings(request.param, home, request)
    server = ServerProcess(settings, home)
    try:
        memory = Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)
        try:
            memory.keys.create(None, "admin")  # from now on the server needs a key
            yield McpHttpServer(server, memory)
        finally:
            memory.close()
    finally:
        server.stop()


def _tenant(server: McpHttpServer) -> KeyedUser:
    user = "u-" + uuid.uuid4().hex[:10]
    return KeyedUser(user, server.key(f"user:{user}"), server.key(f"user:{user}", "read"))


@pytest.fixture
def alice(mcp_server: McpHttpServer) -> KeyedUser:
    return _tenant(mcp_server)


@pytest.fixture
def bob(mcp_server: McpHttpServer) -> KeyedUser:
    return _tenant(mcp_server)
