"""Clients of ``linkmem serve`` (``RemoteMemory``, ``AsyncRemoteMemory``) and the asyncio
wrapper of an embedded ``Memory`` (``AsyncMemory``): the same calls as ``Memory``.

Each is imported on first use, so ``RemoteMemory`` does not pull in asyncio and the embedded
``Memory``, nor ``AsyncMemory`` the other way round.
"""

from typing import TYPE_CHECKING, Any

from linkmem.lazy import load_lazy

if TYPE_CHECKING:
    from linkmem.client.aio import AsyncMemory, AsyncRemoteMemory
    from linkmem.client.remote import RemoteMemory

__all__ = ["AsyncMemory", "AsyncRemoteMemory", "RemoteMemory"]

_LAZY = {
    "AsyncMemory": "linkmem.client.aio",
    "AsyncRemoteMemory": "linkmem.client.aio",
    "RemoteMemory": "linkmem.client.remote",
}


def __getattr__(name: str) -> Any:
    return load_lazy("linkmem.client", _LAZY, globals(), name)
