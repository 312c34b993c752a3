"""The backend-independent half of the ``Store`` contract's ``export_records`` and
``import_records``; the format itself is in ``linkmem.store.transfer``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from linkmem.errors import InvalidInput, LinkmemError
from linkmem.store.transfer import (
    KINDS,
    ImportBatch,
    ImportedEntity,
    Row,
    check_embedder,
    check_header,
    entity_row,
    header_row,
    history_row,
    import_batches,
    link_row,
    memory_row,
    runs,
)
from linkmem.types import EntityRecord, HistoryEvent, MemoryRecord, Scope


def _repeated(values: Iterable[Any]) -> set[Any]:
    return {v for v, n in Counter(values).items() if n > 1}


@dataclass
class _Seen:
    """Ids and entity keys of the batches checked so far in one import: a dry run writes
    none of them, so the store alone cannot tell that a later batch repeats one."""

    memories: set[str] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)
    keys: set[tuple[Scope, str]] = field(default_factory=set)

    def add(self, batch: ImportBatch) -> None:
        self.memories.update(m.record.id for m in batch.memories)
        self.entities.update(e.entity.id for e in batch.entities)
        self.keys.update((e.entity.scope, e.entity.key) for e in batch.entities)


class TransferMixin:
    """``export_records`` and ``import_records`` of the ``Store`` contract. A backend
    subclasses it with its SQL for the hooks below; the rest comes from the contract."""

    dim: int

    def _snapshot(self) -> AbstractContextManager[Any]:
        """One consistent, read-only view for the whole export."""
        raise NotImplementedError

    def _export_source(self) -> tuple[str, str]:
        """``(backend name, collection)``."""
        raise NotImplementedError

    def _export_counts(self) -> dict[str, int]:
        """Rows per kind: memory, entity, link, history."""
        raise NotImplementedError

    def _export_memories(self, batch_size: int) -> Iterator[tuple[MemoryRecord, bytes]]:
        """Records with little-endian float32 vector bytes, in insertion order."""
        raise NotImplementedError

    def _export_entities(self, batch_size: int) -> Iterator[tuple[EntityRecord, str, bytes]]:
        """``(record, created_at, vector bytes)`` in insertion order."""
        raise NotImplementedError

    def _export_links(self, batch_size: int) -> Iterator[tuple[str, str, bool]]:
        """``(memory_id, entity_id, own)``: own is false for an inherited link."""
        raise NotImplementedError

    def _export_history(self, batch_size: int) -> Iterator[HistoryEvent]:
        """Every history event, oldest first."""
        raise NotImplementedError

    def _insert_imported(self, entities: list[ImportedEntity]) -> None:
        """Insert entities with their ids and ``created_at`` (no conflict handling)."""
        raise NotImplementedError

    def export_records(self, batch_size: int = 1000) -> Iterator[Row]:
        """The whole collection as JSON-ready rows (header, memories, entities, links,
        history), read from one consistent snapshot, ``batch_size`` rows per query."""
        store: Any = self  # the contract methods come from the backend's other mixins
        with self._snapshot():
            backend, collection = self._export_source()
            embedder = store.get_meta("embedder")
            yield header_row(backend, collection, embedder, self.dim, self._export_counts())
            yield from self._memory_rows(batch_size)
            for entity, created_at, vector in self._export_entities(batch_size):
                yield entity_row(entity, created_at, vector)
            for memory_id, entity_id, own in self._export_links(batch_size):
                yield link_row(memory_id, entity_id, own)
            for event in self._export_history(batch_size):
                yield history_row(event)

    def _memory_rows(self, batch_size: int) -> Iterator[Row]:
        """Memory rows with their context terms, read ``batch_size`` memories at a time."""
        store: Any = self
        batch: list[tuple[MemoryRecord, bytes]] = []
        for item in chain(self._export_memories(batch_size), [None]):
            if item is not None:
                batch.append(item)
            if batch and (item is None or len(batch) >= batch_size):
                stored = store.postings_of([record.id for record, _ in batch])
                for record, vector in batch:
                    yield memory_row(record, vector, stored[record.id].context)
                batch = []

    def import_records(
        self, rows: Iterable[Any], batch_size: int = 1000, dry_run: bool = False
    ) -> dict[str, int]:
        """Write the rows of an export (header first), ``batch_size`` rows per transaction,
        keeping ids, timestamps and vectors. A batch whose ids already exist here is refused
        whole (``InvalidInput``), and so is a link to an id that is neither in the export
        nor here. ``dry_run`` checks every row and id without writing: what it accepts, the
        import writes whole."""
        store: Any = self
        iterator = iter(rows)
        header = check_header(next(iterator, None))
        stored = store.get_meta("embedder")
        check_embedder(header, stored, self.dim)
        if stored is None and header["embedder"] and not dry_run:
            store.set_meta("embedder", header["embedder"])
        counts: Counter[str] = Counter()
        seen = _Seen()
        for batch in import_batches(iterator, batch_size, self.dim):
            try:
                self._check_new(batch, seen)
                self._check_links(batch, seen)
                seen.add(batch)
                if not dry_run:
                    self._write(batch)
            except LinkmemError as e:
                kept = f"; the {sum(counts.values())} rows before were written" * bool(counts)
                raise type(e)(f"{batch.span}: {e}{'' if dry_run else kept}") from e
            counts.update(batch.counts())
        _check_counts(header, counts)
        return {kind: counts[kind] for kind in KINDS}

    def _check_new(self, batch: ImportBatch, seen: _Seen) -> None:
        """Refuse ids (and entity keys) that repeat in the export or already exist here."""
        store: Any = self
        ids = [m.record.id for m in batch.memories]
        taken = _repeated(ids) | (seen.memories & set(ids))
        taken |= {r.id for r in store.get_memories(ids)}
        if taken:
            raise InvalidInput(_taken("memory ids", taken))
        ids = [e.entity.id for e in batch.entities]
        taken = _repeated(ids) | (seen.entities & set(ids))
        taken |= {r.id for r in store.get_entities(ids)}
        keys = [(e.entity.scope, e.entity.key) for e in batch.entities]
        taken |= {key for _, key in _repeated(keys) | (seen.keys & set(keys))}
        for scope in {scope for scope, _ in keys}:
            taken |= set(store.find_entities(scope, [k for s, k in keys if s == scope]))
        if taken:
            raise InvalidInput(_taken("entity ids or keys", taken))

    def _check_links(self, batch: ImportBatch, seen: _Seen) -> None:
        """Refuse links to memories or entities that are neither in the export nor here."""
        store: Any = self
        links = [*batch.links, *batch.inherited]
        memories = {m for m, _ in links} - seen.memories
        memories -= {m.record.id for m in batch.memories}
        missing = memories - {r.id for r in store.get_memories(sorted(memories))}
        entities = {e for _, e in links} - seen.entities
        entities -= {e.entity.id for e in batch.entities}
        missing |= entities - {r.id for r in store.get_entities(sorted(entities))}
        if missing:
            shown = ", ".join(repr(i) for i in sorted(missing)[:5])
            raise InvalidInput(
                f"links name ids that are neither in the export nor in the target store: "
                f"{shown}; the file is damaged or was edited, and this batch was not written"
            )

    def _write(self, batch: ImportBatch) -> None:
        store: Any = self
        with store.transaction():
            for group in runs(batch.memories, lambda m: m.record.scope):
                store.put_memories(group)
            self._insert_imported(batch.entities)
            store.link(batch.links)
            store.link(batch.inherited, own=False)
            store.append_history(batch.history)


def _taken(what: str, values: set[str]) -> str:
    shown = ", ".join(repr(v) for v in sorted(values)[:5])
    more = f" and {len(values) - 5} more" if len(values) > 5 else ""
    return (
        f"{what} already in the target store (or repeated in the export): {shown}{more}; "
        "this batch was not written. Restore into an empty collection (--collection) or "
        "another store"
    )


def _check_counts(header: Row, counts: Counter[str]) -> None:
    expected = header["counts"]
    wrong = [k for k in KINDS if expected.get(k) != counts[k]]
    if wrong:
        detail = ", ".join(f"{k}: {counts[k]} of {expected.get(k)}" for k in wrong)
        raise InvalidInput(
            f"the export has other row counts than its header says ({detail}); the file is "
            "truncated or was edited"
        )
