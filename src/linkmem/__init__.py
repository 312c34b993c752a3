"""linkmem: long-term memory for AI agents, with entity linking and no graph database."""

from linkmem.errors import (
    BackendUnavailable,
    ConfigError,
    EmbedderMismatch,
    InvalidInput,
    LinkmemError,
    MigrationError,
    ModelUnavailable,
    NotFound,
    PermissionDenied,
    StoreError,
)
from linkmem.memory import Memory
from linkmem.tenancy import Tenant
from linkmem.types import EntityRecord, HistoryEvent, Hit, MemoryRecord, Scope, ScoreParts

__version__ = "0.1.0"

__all__ = [
    "BackendUnavailable",
    "ConfigError",
    "EmbedderMismatch",
    "EntityRecord",
    "HistoryEvent",
    "Hit",
    "InvalidInput",
    "LinkmemError",
    "Memory",
    "MemoryRecord",
    "MigrationError",
    "ModelUnavailable",
    "NotFound",
    "PermissionDenied",
    "Scope",
    "ScoreParts",
    "StoreError",
    "Tenant",
    "__version__",
]
