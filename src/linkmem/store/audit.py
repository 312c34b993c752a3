"""The backend-independent half of ``Store.audit``: the invariants every store must keep.

A consistent store has, for every memory, a finite non-zero vector of the store's dimension,
BM25 postings whose own counts equal the terms of its own text (and a document length to
match) and whose context weights (``linkmem.rank.neighbour_terms``, written with the memory
from its neighbours of that call) sum to its context length, links only
to entities of its own scope, and a history that starts with ADD and ends at its current text;
every entity has at least one own link (``linkmem.entities.inherit``); and each scope's BM25
statistics (document count, total length) equal the sums over its memories. ``audit`` reads
all of it from one snapshot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from linkmem.rank.terms import terms
from linkmem.types import EntityRecord, HistoryEvent, MemoryRecord, Scope

#: Problem kinds, with what each means (``linkmem check`` prints these).
KINDS = {
    "bad_vector": "memories whose vector is missing, of the wrong size, not finite or zero",
    "wrong_postings": "memories whose BM25 postings or length differ from their text's terms "
    "(or whose context length differs from their context terms)",
    "orphan_entity": "entities no memory names (no own link; inherited ones do not count)",
    "foreign_link": "links between a memory and an entity of another scope",
    "history_gap": "memories whose history does not start with ADD and end at their text",
    "stale_stats": "scopes whose BM25 document count or total length is off",
    "stray_postings": "postings of no memory, of no weight, or filed under another scope",
    "stale_link_counts": "entities whose kept link count differs from their own links "
    "(PostgreSQL keeps the counts by trigger)",
}


@dataclass
class StoredPostings:
    """A memory's keyword document as stored: own length and counts, context length and
    weights (1/CONTEXT_SCALE units); a term of both kinds is in both."""

    doc_len: int = -1
    tf: Counter[str] = field(default_factory=Counter)
    ctx_len: int = 0
    context: dict[str, int] = field(default_factory=dict)

    def add(self, term: str, tf: int, ctx: int) -> None:
        if tf:
            self.tf[term] = tf
        if ctx:
            self.context[term] = ctx

    def matches(self, expected: list[str]) -> bool:
        """Own postings equal the text's ``expected`` terms; the context adds up."""
        return (
            self.doc_len == len(expected)
            and self.tf == Counter(expected)
            and self.ctx_len == sum(self.context.values())
        )


@dataclass
class AuditReport:
    """What ``audit`` found: the ids (or scopes) breaking each invariant."""

    memories: int = 0
    entities: int = 0
    problems: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())

    def to_dict(self, repaired: bool = False, examples: int = 5) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "repaired": repaired,
            "memories": self.memories,
            "entities": self.entities,
            "problems": [
                {
                    "kind": kind,
                    "count": len(found),
                    "detail": KINDS[kind],
                    "examples": found[:examples],
                }
                for kind, found in self.problems.items()
                if found
            ],
        }


class AuditMixin:
    """``audit()`` for a store that also has ``TransferMixin``: it reads through that mixin's
    ``_snapshot`` and ``_export_*`` hooks, plus the three hooks below."""

    dim: int
    _snapshot: Callable[[], AbstractContextManager[Any]]
    _export_memories: Callable[[int], Iterator[tuple[MemoryRecord, bytes]]]
    _export_entities: Callable[[int], Iterator[tuple[EntityRecord, str, bytes]]]
    _export_links: Callable[[int], Iterator[tuple[str, str, bool]]]
    _export_history: Callable[[int], Iterator[HistoryEvent]]

    def postings_of(self, ids: Sequence[str]) -> dict[str, StoredPostings]:
        """memory id -> its stored keyword document."""
        raise NotImplementedError

    def bookkeeping_problems(self) -> dict[str, list[str]]:
        """``stale_stats`` (scopes, as text) and ``stray_postings`` (memory keys) found in SQL."""
        raise NotImplementedError

    def repair_bookkeeping(self) -> None:
        """Drop stray postings and recompute every scope's BM25 statistics from its memories
        (and the link counts, where a store keeps them)."""
        raise NotImplementedError

    def audit(self, batch_size: int = 1000) -> AuditReport:
        """Check every invariant of the module docstring from one consistent snapshot."""
        report = AuditReport()
        with self._snapshot():
            scopes, texts = self._audit_memories(report, batch_size)
            self._audit_links(report, scopes, batch_size)
            self._audit_history(report, texts, batch_size)
            for kind, found in self.bookkeeping_problems().items():
                report.problems[kind] += found
        return report

    def _audit_memories(
        self, report: AuditReport, batch_size: int
    ) -> tuple[dict[str, Scope], dict[str, str]]:
        scopes: dict[str, Scope] = {}
        texts: dict[str, str] = {}
        batch: list[MemoryRecord] = []
        for record, vector in self._export_memories(batch_size):
            scopes[record.id], texts[record.id] = record.scope, record.text
            if not _usable_vector(vector, self.dim):
                report.problems["bad_vector"].append(record.id)
            batch.append(record)
            if len(batch) >= batch_size:
                self._audit_postings(report, batch)
                batch = []
        self._audit_postings(report, batch)
        report.memories = len(scopes)
        return scopes, texts

    def _audit_postings(self, report: AuditReport, records: list[MemoryRecord]) -> None:
        stored = self.postings_of([r.id for r in records])
        for record in records:
            if not stored.get(record.id, StoredPostings()).matches(terms(record.text)):
                report.problems["wrong_postings"].append(record.id)

    def _audit_links(self, report: AuditReport, scopes: dict[str, Scope], batch_size: int) -> None:
        entity_scopes = {e.id: e.scope for e, _, _ in self._export_entities(batch_size)}
        report.entities = len(entity_scopes)
        linked: set[str] = set()
        for memory_id, entity_id, own in self._export_links(batch_size):
            if own:
                linked.add(entity_id)
            if scopes.get(memory_id) != entity_scopes.get(entity_id):
                report.problems["foreign_link"].append(f"{memory_id} -> {entity_id}")
        report.problems["orphan_entity"] += [e for e in entity_scopes if e not in linked]

    def _audit_history(self, report: AuditReport, texts: dict[str, str], batch_size: int) -> None:
        first: dict[str, HistoryEvent] = {}
        last: dict[str, HistoryEvent] = {}
        for event in self._export_history(batch_size):
            first.setdefault(event.memory_id, event)
            last[event.memory_id] = event
        for memory_id, text in texts.items():
            start, end = first.get(memory_id), last.get(memory_id)
            if start is None or start.event != "ADD" or end is None or end.new_text != text:
                report.problems["history_gap"].append(memory_id)


def _usable_vector(vector: bytes, dim: int) -> bool:
    if vector is None or len(vector) != 4 * dim:
        return False
    values = np.frombuffer(vector, dtype="<f4")
    return bool(np.isfinite(values).all() and np.any(values))
