"""Clients of ``linkmem serve`` (``RemoteMemory``, ``AsyncRemoteMemory``) and the asyncio
wrapper of an embedded ``Memory`` (``AsyncMemory``): the same calls as ``Memory``."""

from linkmem.client.aio import AsyncMemory, AsyncRemoteMemory
from linkmem.client.remote import RemoteMemory

__all__ = ["AsyncMemory", "AsyncRemoteMemory", "RemoteMemory"]
