"""The records a write creates: new memories, an updated one, and their history events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from linkmem import validation as v
from linkmem.ids import new_ids
from linkmem.types import HistoryEvent, MemoryRecord, Scope


def now() -> datetime:
    return datetime.now(UTC)


def history_event(
    record: MemoryRecord,
    event: str,
    old_text: str | None,
    new_text: str | None,
    at: str,
) -> HistoryEvent:
    return HistoryEvent(record.id, event, old_text, new_text, at, record.role, record.actor_id)


def new_records(
    items: Sequence[Any],
    metas: list[Any],
    scope: Scope,
    max_chars: int,
    max_bytes: int,
    times: Sequence[datetime | None] | None = None,
) -> list[MemoryRecord]:
    """One record per non-system message of each item, in order, with distinct times: now,
    or the item's own time (``times``, validated by ``validation.validate_timestamps``)."""
    parsed = [
        (v.normalise_messages(i, max_chars), v.validate_metadata(m, max_bytes))
        for i, m in zip(items, metas)
    ]
    start = now()
    messages = [
        (message, meta, own)
        for (batch, meta), own in zip(parsed, times or [None] * len(parsed), strict=True)
        for message in batch
    ]
    ids = new_ids(len(messages))
    records = []
    for i, (memory_id, (message, meta, own)) in enumerate(zip(ids, messages, strict=True)):
        # Distinct microseconds keep the order of one batch in "newest first" listings.
        at = ((own or start) + timedelta(microseconds=i)).isoformat()
        role, name = message.role, message.name
        records.append(MemoryRecord(memory_id, message.content, scope, meta, at, at, role, name))
    return records


def updated_record(old: MemoryRecord, text: str | None, metadata: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        old.id,
        old.text if text is None else text,
        old.scope,
        {**old.metadata, **metadata},
        old.created_at,
        now().isoformat(),
        old.role,
        old.actor_id,
    )
