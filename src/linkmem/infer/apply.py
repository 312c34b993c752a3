"""Step 4 of ``infer=True``: apply every decision of the call in one transaction.

Each change is what the raw call would write: an ADD is a new memory (vector, BM25 postings,
entity links, ADD history), an UPDATE is ``Memory.update`` of the text (re-embedded,
re-indexed, unlinked, re-linked, orphaned entities dropped, UPDATE history), a DELETE is
``Memory.delete``. Models run before the transaction; inside it there are only store calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from linkmem import validation as v
from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.entities.linker import LinkPlan, apply_links, plan_links
from linkmem.errors import NotFound
from linkmem.extract.base import EntityExtractor
from linkmem.ids import new_id
from linkmem.infer.extract import Fact, Turn
from linkmem.infer.reconcile import Decision
from linkmem.rank.terms import terms
from linkmem.store.base import NewMemory, Store
from linkmem.types import HistoryEvent, MemoryRecord, Scope

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Models:
    """What the write path needs besides the store (``Memory``'s parts)."""

    embedder: Embedder
    extractor: EntityExtractor | None
    retrieval: RetrievalConfig
    max_metadata_bytes: int


@dataclass(frozen=True)
class Change:
    """One decision made concrete: the record to write and what it replaces."""

    event: str  # ADD | UPDATE | DELETE
    record: MemoryRecord  # the new record (ADD, UPDATE) or the one deleted
    old: MemoryRecord | None = None  # UPDATE: the record before


def plan_changes(
    decisions: Sequence[Decision],
    facts: Sequence[Fact],
    turns: Sequence[Turn],
    metas: Sequence[dict[str, Any]],
    scope: Scope,
    max_metadata_bytes: int,
) -> list[Change]:
    """Records for the decisions; NONE and an UPDATE that changes nothing are dropped."""
    by_number = {t.number: t for t in turns}
    with_item = len(metas) > 1
    start = datetime.now(UTC)
    changes: list[Change] = []
    for d in decisions:
        sources = [by_number[n] for n in facts[d.fact].sources]
        inferred = {"inferred_from": [t.source(with_item) for t in sources]}
        at = (start + timedelta(microseconds=len(changes))).isoformat()
        if d.event == "ADD":
            meta = v.validate_metadata({**metas[sources[0].item], **inferred}, max_metadata_bytes)
            first = sources[0].message
            record = MemoryRecord(
                new_id(), d.text or "", scope, meta, at, at, first.role, first.name
            )
            changes.append(Change("ADD", record))
        elif d.event == "UPDATE" and d.target and not _same(d.target.text, d.text or ""):
            meta = v.validate_metadata({**d.target.metadata, **inferred}, max_metadata_bytes)
            record = replace(d.target, text=d.text or "", metadata=meta, updated_at=at)
            changes.append(Change("UPDATE", record, d.target))
        elif d.event == "DELETE" and d.target:
            changes.append(Change("DELETE", d.target))
    return changes


def _same(a: str, b: str) -> bool:
    return _SPACE.sub(" ", a).strip().casefold() == _SPACE.sub(" ", b).strip().casefold()


def prepare(
    changes: Sequence[Change], models: Models, known: dict[str, np.ndarray]
) -> Callable[[Store], list[dict[str, Any]]]:
    """Run the models (embeddings, entity plan) now; return the transaction's work."""
    written = [c for c in changes if c.event != "DELETE"]
    texts = [c.record.text for c in written]
    missing = list(dict.fromkeys(t for t in texts if t not in known))
    vectors = dict(known)
    if missing:
        vectors.update(zip(missing, models.embedder.embed_batch(missing)))
    plan = None
    if models.extractor is not None and texts:
        plan = plan_links(texts, models.extractor, models.embedder, models.retrieval)

    def work(store: Store) -> list[dict[str, Any]]:
        _lock_targets(store, changes)
        gone = [c.record.id for c in changes if c.event != "ADD"]
        touched = store.unlink_memories(gone) if gone else []
        deleted = [c.record.id for c in changes if c.event == "DELETE"]
        if deleted:
            store.delete_memories(deleted)
        new = [c.record for c in written if c.event == "ADD"]
        if new:
            store.put_memories([NewMemory(r, vectors[r.text], terms(r.text)) for r in new])
        for c in written:
            if c.event == "UPDATE":
                store.update_memory(c.record, vectors[c.record.text], terms(c.record.text))
        if plan is not None:
            _link(store, [c.record for c in written], plan, models.retrieval)
        store.drop_orphan_entities(touched)
        store.append_history([_history(c) for c in changes])
        return [event_of(c) for c in changes]

    return work


def _lock_targets(store: Store, changes: Sequence[Change]) -> None:
    """The memories to update or delete, locked; one deleted or changed since the search is
    ``NotFound`` (the transaction rolls back: nothing of the call is written)."""
    expected = {c.record.id: (c.old or c.record) for c in changes if c.event != "ADD"}
    if not expected:
        return
    locked = {r.id: r for r in store.lock_memories(list(expected))}
    for mid, seen in expected.items():
        now = locked.get(mid)
        if now is None or now.text != seen.text:
            raise NotFound(
                f"memory {mid} was changed or deleted while this add ran; run the add again"
            )


def _link(store: Store, records: list[MemoryRecord], plan: LinkPlan, config: RetrievalConfig):
    """Link each record to its entities in its own exact scope (an UPDATE may target a
    memory of a narrower scope than the call's)."""
    groups: dict[Scope, list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(record.scope, []).append(i)
    for scope, indices in groups.items():
        sub = _subplan(plan, indices)
        apply_links(store, scope, [records[i].id for i in indices], sub, config)


def _subplan(plan: LinkPlan, indices: list[int]) -> LinkPlan:
    per_memory = [plan.per_memory[i] for i in indices]
    keys = {k for keys in per_memory for k in keys}
    entities = {k: e for k, e in plan.entities.items() if k in keys}
    return LinkPlan(per_memory, entities, {k: plan.vectors[k] for k in entities})


def _history(change: Change) -> HistoryEvent:
    r = change.record
    if change.event == "ADD":
        return HistoryEvent(r.id, "ADD", None, r.text, r.created_at, r.role, r.actor_id)
    if change.event == "UPDATE":
        old = change.old or r
        return HistoryEvent(r.id, "UPDATE", old.text, r.text, r.updated_at, r.role, r.actor_id)
    at = datetime.now(UTC).isoformat()
    return HistoryEvent(r.id, "DELETE", r.text, None, at, r.role, r.actor_id)


def event_of(change: Change) -> dict[str, Any]:
    """A Mem0-shaped event: ``id``, ``memory``, ``event``, ``previous_memory`` (+ the record)."""
    r = change.record
    if change.event == "DELETE":
        return {"id": r.id, "memory": r.text, "event": "DELETE", "previous_memory": None}
    previous = change.old.text if change.old else None
    return {**r.to_dict(), "event": change.event, "previous_memory": previous}
