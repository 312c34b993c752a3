"""linkmem: long-term memory for AI agents, with entity linking and no graph database."""

from linkmem.client import AsyncMemory, AsyncRemoteMemory, RemoteMemory
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
from linkmem.memory import Memory
from linkmem.tenancy import Tenant
from linkmem.types import EntityRecord, HistoryEvent, Hit, MemoryRecord, Scope, ScoreParts

__version__ = "0.1.0"

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
