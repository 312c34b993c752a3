"""Frozen records that cross the public API and the storage contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCOPE_KEYS = ("user_id", "agent_id", "run_id")


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to. For writes the three ids are the exact scope; for reads the
    ids that are set must all match (an unset id matches anything)."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def items(self) -> list[tuple[str, str]]:
        """The ids that are set, as ``(key, value)`` pairs."""
        return [(k, v) for k, v in zip(SCOPE_KEYS, self.as_tuple()) if v is not None]

    def as_tuple(self) -> tuple[str | None, str | None, str | None]:
        return (self.user_id, self.agent_id, self.run_id)

    def as_dict(self) -> dict[str, str]:
        return _scope_dict({}, self)

    def is_empty(self) -> bool:
        return not self.items()

    def contains(self, other: Scope) -> bool:
        """True when ``other`` (an exact scope) falls inside this (subset) scope."""
        return all(getattr(other, k) == v for k, v in self.items())


def _scope_dict(out: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """``out`` with the ids of ``scope`` that are set (``Scope.as_dict``'s keys, in order):
    every search result builds one, without ``items``'s list."""
    if scope.user_id is not None:
        out["user_id"] = scope.user_id
    if scope.agent_id is not None:
        out["agent_id"] = scope.agent_id
    if scope.run_id is not None:
        out["run_id"] = scope.run_id
    return out


@dataclass(frozen=True)
class MemoryRecord:
    id: str
    text: str
    scope: Scope
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""
    role: str | None = None
    actor_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "memory": self.text,
            "metadata": dict(self.metadata),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        _scope_dict(out, self.scope)
        if self.role is not None:
            out["role"] = self.role
        if self.actor_id is not None:
            out["actor_id"] = self.actor_id
        return out


@dataclass(frozen=True)
class EntityRecord:
    id: str
    text: str
    key: str
    kind: str
    scope: Scope
    link_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "entity": self.text,
            "key": self.key,
            "kind": self.kind,
            "link_count": self.link_count,
        }
        out.update(self.scope.as_dict())
        return out


@dataclass(frozen=True)
class HistoryEvent:
    memory_id: str
    event: str  # ADD | UPDATE | DELETE
    old_text: str | None
    new_text: str | None
    created_at: str
    role: str | None = None
    actor_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "event": self.event,
            "old_memory": self.old_text,
            "new_memory": self.new_text,
            "created_at": self.created_at,
            "role": self.role,
            "actor_id": self.actor_id,
        }


@dataclass(frozen=True)
class ScoreParts:
    """The components of one search result's score (``explain=True``)."""

    dense: float
    bm25_raw: float
    bm25: float
    entity_boost: float
    entity: str | None
    score: float
    hop_boost: float = 0.0
    hop_entity: str | None = None
    time_boost: float = 0.0  # dates the question names, "when" (linkmem.rank.time_boost)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dense": round(self.dense, 6),
            "bm25_raw": round(self.bm25_raw, 6),
            "bm25": round(self.bm25, 6),
            "entity_boost": round(self.entity_boost, 6),
            "entity": self.entity,
            "hop_boost": round(self.hop_boost, 6),
            "hop_entity": self.hop_entity,
            "time_boost": round(self.time_boost, 6),
            "score": round(self.score, 6),
        }


@dataclass(frozen=True)
class Hit:
    record: MemoryRecord
    score: float
    parts: ScoreParts

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        out = self.record.to_dict()
        out["score"] = round(self.score, 6)
        if explain:
            out["score_details"] = self.parts.to_dict()
        return out
