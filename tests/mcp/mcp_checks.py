"""Helpers of the MCP suites: the SDK's own clients against linkmem's servers, and what every
answer must look like."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from server_fixtures import ServerProcess

from linkmem import Memory

#: The ``linkmem`` console script of the environment running the tests.
LINKMEM = str(Path(sys.executable).with_name("linkmem"))
DOG = "I adopted a dog named Max"


@dataclass
class McpHttpServer:
    server: ServerProcess
    memory: Memory  # the embedded Memory that creates keys on the server's store

    @property
    def url(self) -> str:
        return f"{self.server.url}/mcp"

    def key(self, tenant: str | None, role: str = "write") -> str:
        """The secret of a new key for ``tenant`` (``user:ID``; None for admin)."""
        return self.memory.keys.create(tenant, role)[1]


@dataclass(frozen=True)
class KeyedUser:
    """A fresh user of the server with a write key and a read key."""

    user_id: str
    secret: str
    read_secret: str


@asynccontextmanager
async def http_client(url: str, secret: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """An MCP client of ``url`` sending ``Authorization: Bearer <secret>`` (None: no header)."""
    headers = {} if secret is None else {"Authorization": f"Bearer {secret}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60.0) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def stdio_params(home: Path, *args: str, embedder: str = "fake") -> StdioServerParameters:
    """``linkmem mcp ARGS`` on the store in ``home``, with the fake embedder unless told
    otherwise (the spaCy extractor stays real)."""
    env = {"LINKMEM_HOME": str(home), "LINKMEM_EMBEDDER": embedder}
    return StdioServerParameters(command=LINKMEM, args=["mcp", *args], env=env)


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def refused(result: CallToolResult, *fragments: str) -> str:
    """The message of a tool error, which names what went wrong and is no traceback."""
    assert result.is_error, text(result)
    message = text(result)
    assert "Traceback" not in message and 'File "' not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def raised(error: BaseException) -> BaseException:
    """The exception inside the task groups a client's failure comes wrapped in."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def ids(result: CallToolResult) -> list[str]:
    return [row["id"] for row in ok(result)["results"]]


def spawn_raw(home: Path, *args: str) -> subprocess.Popen:
    """``linkmem mcp`` as a plain subprocess, to read its stdout line by line."""
    env = {**os.environ, "LINKMEM_HOME": str(home), "LINKMEM_EMBEDDER": "fake"}
    return subprocess.Popen(
        [LINKMEM, "mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )


def send(process: subprocess.Popen, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def answer(process: subprocess.Popen, request_id: int) -> dict[str, Any]:
    """The response to ``request_id``; every line before it must be JSON-RPC too."""
    assert process.stdout is not None
    for line in process.stdout:
        message = json.loads(line)  # anything but JSON-RPC on stdout fails here
        assert message.get("jsonrpc") == "2.0", line
        if message.get("id") == request_id:
            return message
    raise AssertionError(f"stdout closed before the answer to {request_id}")
