"""For asyncio agents: ``AsyncMemory`` (embedded; the blocking work runs in worker threads,
off the event loop) and ``AsyncRemoteMemory`` (``RemoteMemory`` on ``httpx.AsyncClient``).
Both offer the calls of ``Memory`` as coroutines, with the same arguments and results."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import httpx

from linkmem.client import transport
from linkmem.client.calls import CALLS, Call
from linkmem.client.transport import ClientSettings
from linkmem.memory import Memory

#: ``Memory`` calls that ``AsyncMemory`` offers as coroutines.
EMBEDDED_CALLS = (*CALLS, "export", "restore", "warm_up")


class AsyncMemory:
    """``Memory`` for asyncio: ``await memory.search(...)``. Takes the arguments of
    ``Memory(...)``, or an existing ``Memory`` as ``memory=``."""

    def __init__(self, *args: Any, memory: Memory | None = None, **kwargs: Any) -> None:
        self.memory = memory if memory is not None else Memory(*args, **kwargs)

    async def close(self) -> None:
        await asyncio.to_thread(self.memory.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _in_thread(name: str) -> Callable[..., Any]:
    blocking = getattr(Memory, name)

    @functools.wraps(blocking)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.memory, name), *args, **kwargs)

    return call


class AsyncRemoteMemory:
    """``RemoteMemory`` for asyncio: ``await memory.search(...)`` against ``linkmem serve``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
    ) -> None:
        self.settings = ClientSettings.resolve(url, api_key, timeout, retries)
        self._http = httpx.AsyncClient(**self.settings.client_options())

    async def _send(self, call: Call) -> Any:
        kwargs, attempt = transport.encode(call), 0
        while True:
            response, error = None, None
            try:
                response = await self._http.request(call.method, call.path, **kwargs)
            except httpx.HTTPError as e:
                error = e
            if not transport.again(call, attempt, self.settings.retries, error, response):
                return transport.finish(self.settings, call, error, response)
            await asyncio.sleep(transport.backoff(attempt))
            attempt += 1

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _async_remote_call(builder: Callable[..., Call]) -> Callable[..., Any]:
    @functools.wraps(builder)
    async def call(self: AsyncRemoteMemory, *args: Any, **kwargs: Any) -> Any:
        return await self._send(builder(*args, **kwargs))

    return call


for _name in EMBEDDED_CALLS:
    setattr(AsyncMemory, _name, _in_thread(_name))
for _name, _builder in CALLS.items():
    setattr(AsyncRemoteMemory, _name, _async_remote_call(_builder))
