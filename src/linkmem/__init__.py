"""linkmem: long-term memory for AI agents, with entity linking and no graph database.

``Memory`` and the clients are imported on first use (PEP 562): ``import linkmem`` stays cheap
for a command that only needs the errors or the version, and the HTTP client is never imported
by a process that only opens a local store.
"""

from typing import TYPE_CHECKING, Any

from linkmem.errors import (
    BackendUnavailable,
    ConfigError,
    EmbedderMismatch,
    InvalidInput,
    InvalidRequest,
    LinkmemError,
    LLMInvalidOutput,
    LLMUnavailable,
    MigrationError,
    ModelUnavailable,
    NotFound,
    PermissionDenied,
    StoreError,
    TooLarge,
    Unauthorized,
)
from linkmem.lazy import load_lazy
from linkmem.types import EntityRecord, HistoryEvent, Hit, MemoryRecord, Scope, ScoreParts

if TYPE_CHECKING:
    from linkmem.client import AsyncMemory, AsyncRemoteMemory, RemoteMemory
    from linkmem.memory import Memory
    from linkmem.tenancy import Tenant

__version__ = "0.1.0"

#: Public names imported on first access, and the module each comes from.
_LAZY = {
    "AsyncMemory": "linkmem.client.aio",
    "AsyncRemoteMemory": "linkmem.client.aio",
    "Memory": "linkmem.memory",
    "RemoteMemory": "linkmem.client.remote",
    "Tenant": "linkmem.tenancy",
}


def __getattr__(name: str) -> Any:
    return load_lazy("linkmem", _LAZY, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AsyncMemory",
    "AsyncRemoteMemory",
    "BackendUnavailable",
    "ConfigError",
    "EmbedderMismatch",
    "EntityRecord",
    "HistoryEvent",
    "Hit",
    "InvalidInput",
    "InvalidRequest",
    "LinkmemError",
    "LLMInvalidOutput",
    "LLMUnavailable",
    "Memory",
    "MemoryRecord",
    "MigrationError",
    "ModelUnavailable",
    "NotFound",
    "PermissionDenied",
    "RemoteMemory",
    "Scope",
    "ScoreParts",
    "StoreError",
    "Tenant",
    "TooLarge",
    "Unauthorized",
    "__version__",
]
