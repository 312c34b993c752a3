"""The export format (JSONL) and the backend-independent half of ``export_records`` /
``import_records``.

An export is one JSON object per line, in this order:

1. one ``header``: ``format`` ("linkmem-export"), ``version``, ``linkmem_version``,
   ``exported_at``, source ``backend`` and ``collection``, ``embedder`` (the store's
   ``model/dim`` meta value), ``dim``, ``vector_encoding`` and the ``counts`` of the rows below;
2. ``memory`` rows: ``id``, ``text``, ``user_id`` / ``agent_id`` / ``run_id`` (null when unset),
   ``metadata``, ``role``, ``actor_id``, ``created_at``, ``updated_at``, ``vector``;
3. ``entity`` rows: ``id``, ``text``, ``key``, ``kind``, the three scope ids, ``created_at``,
   ``vector``;
4. ``link`` rows: ``memory_id``, ``entity_id`` and, for a link the memory inherits (a name
   it refers back to, ``linkmem.entities.inherit``), ``inherited``: true (version 3; a row
   without it, as every older row, is the memory's own link);
5. ``history`` rows: ``memory_id``, ``event``, ``old_text``, ``new_text``, ``created_at``,
   ``role``, ``actor_id``, oldest first (kept for deleted memories too).

Every row has a ``type`` naming its kind. Vectors are base64 of little-endian float32 bytes (the
on-disk format of the SQLite store), so they move between backends bit for bit. A memory's own
BM25 terms are not exported: they are recomputed from the text on import
(``linkmem.rank.terms``). Its context terms (the neighbour words it was written with,
``linkmem.rank.neighbour_terms``) cannot be: a memory row that has them carries ``context``,
``{term: weight}`` (version 2; a row without it, as every version 1 row, has none).

Rows in are held to the storage rules of new writes (``linkmem.validation``: no NUL or lone
surrogates, valid scope ids, plain JSON metadata with 64-bit integers and finite numbers) and
vectors must be finite, so a row that one backend could not store is refused by the check
before anything is written. The size limits of new writes (``max_text_chars``,
``max_metadata_bytes``) do not apply: a restore brings back what was stored.

The contract methods that read and write it are in ``linkmem.store.transfer_mixin``.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np

from linkmem.errors import EmbedderMismatch, InvalidInput
from linkmem.rank.neighbour_terms import CONTEXT_SCALE
from linkmem.rank.terms import terms
from linkmem.store.base import NewEntity, NewMemory
from linkmem.types import SCOPE_KEYS, EntityRecord, HistoryEvent, MemoryRecord, Scope
from linkmem.validation import (
    check_storable,
    shown,
    validate_batch_size,
    validate_metadata,
    validate_scope_id,
)

FORMAT = "linkmem-export"
VERSION = 3
VECTOR_ENCODING = "base64 float32 little-endian"
KINDS = ("memory", "entity", "link", "history")
EVENTS = ("ADD", "UPDATE", "DELETE")

Row = dict[str, Any]
_STR = (str,)
_OPT = (str, type(None))
_SCOPE = {k: _OPT for k in SCOPE_KEYS}
#: Each row type's keys (besides ``type``) and the JSON types they may hold.
FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "header": {
        "format": _STR,
        "version": (int,),
        "linkmem_version": _STR,
        "exported_at": _STR,
        "backend": _STR,
        "collection": _STR,
        "embedder": _OPT,
        "dim": (int,),
        "vector_encoding": _STR,
        "counts": (dict,),
    },
    "memory": {
        "id": _STR,
        "text": _STR,
        **_SCOPE,
        "metadata": (dict,),
        "role": _OPT,
        "actor_id": _OPT,
        "created_at": _STR,
        "updated_at": _STR,
        "vector": _STR,
    },
    "entity": {
        "id": _STR,
        "text": _STR,
        "key": _STR,
        "kind": _STR,
        **_SCOPE,
        "created_at": _STR,
        "vector": _STR,
    },
    "link": {"memory_id": _STR, "entity_id": _STR},
    "history": {
        "memory_id": _STR,
        "event": _STR,
        "old_text": _OPT,
        "new_text": _OPT,
        "created_at": _STR,
        "role": _OPT,
        "actor_id": _OPT,
    },
}


#: Keys a row of that type may leave out.
OPTIONAL: dict[str, dict[str, tuple[type, ...]]] = {
    "memory": {"context": (dict,)},
    "link": {"inherited": (bool,)},
}


# vectors ----------------------------------------------------------------------------------------
def encode_vector(vector: np.ndarray | bytes) -> str:
    """Base64 of little-endian float32 bytes (bytes are taken as already in that form)."""
    raw = vector if isinstance(vector, bytes) else np.asarray(vector, dtype="<f4").tobytes()
    return base64.b64encode(raw).decode("ascii")


def decode_vector(text: str, dim: int, where: str) -> np.ndarray:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise InvalidInput(f"{where}: vector is not base64 ({e})") from e
    if len(raw) != 4 * dim:
        raise InvalidInput(
            f"{where}: vector has {len(raw) // 4} dimensions, the header says {dim}; "
            "the file is damaged or was edited"
        )
    vector = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(vector).all():
        raise InvalidInput(
            f"{where}: vector holds NaN or infinity, which PostgreSQL cannot store; the file "
            "is damaged or was edited"
        )
    return vector


# rows out ---------------------------------------------------------------------------------------
def header_row(
    backend: str, collection: str, embedder: str | None, dim: int, counts: dict[str, int]
) -> Row:
    from linkmem import __version__

    return {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "linkmem_version": __version__,
        "exported_at": datetime.now(UTC).isoformat(),
        "backend": backend,
        "collection": collection,
        "embedder": embedder,
        "dim": dim,
        "vector_encoding": VECTOR_ENCODING,
        "counts": {kind: int(counts.get(kind, 0)) for kind in KINDS},
    }


def memory_row(
    record: MemoryRecord, vector: np.ndarray | bytes, context: dict[str, int] | None = None
) -> Row:
    extra = {"context": {t: w / CONTEXT_SCALE for t, w in context.items()}} if context else {}
    return {
        "type": "memory",
        "id": record.id,
        "text": record.text,
        **dict(zip(SCOPE_KEYS, record.scope.as_tuple())),
        "metadata": record.metadata,
        "role": record.role,
        "actor_id": record.actor_id,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "vector": encode_vector(vector),
        **extra,
    }


def entity_row(entity: EntityRecord, created_at: str, vector: np.ndarray | bytes) -> Row:
    return {
        "type": "entity",
        "id": entity.id,
        "text": entity.text,
        "key": entity.key,
        "kind": entity.kind,
        **dict(zip(SCOPE_KEYS, entity.scope.as_tuple())),
        "created_at": created_at,
        "vector": encode_vector(vector),
    }


def link_row(memory_id: str, entity_id: str, own: bool = True) -> Row:
    row = {"type": "link", "memory_id": memory_id, "entity_id": entity_id}
    return row if own else {**row, "inherited": True}


def history_row(event: HistoryEvent) -> Row:
    return {
        "type": "history",
        "memory_id": event.memory_id,
        "event": event.event,
        "old_text": event.old_text,
        "new_text": event.new_text,
        "created_at": event.created_at,
        "role": event.role,
        "actor_id": event.actor_id,
    }


# rows in ----------------------------------------------------------------------------------------
def check_fields(row: Any, where: str) -> str:
    """The row's type, after checking it has exactly that type's keys, of the right kinds."""
    if not isinstance(row, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(row).__name__}")
    kind = row.get("type")
    spec = FIELDS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        raise InvalidInput(
            f"{where}: unknown row type {shown(kind)}; expected one of {', '.join(FIELDS)}"
        )
    keys = set(row) - {"type"}
    optional = OPTIONAL.get(kind, {})
    spec = {**spec, **{k: v for k, v in optional.items() if k in keys}}
    missing, unknown = sorted(spec.keys() - keys), sorted(keys - spec.keys())
    if missing or unknown:
        parts = [f"missing {', '.join(missing)}"] * bool(missing)
        parts += [f"unknown {', '.join(unknown)}"] * bool(unknown)
        raise InvalidInput(f"{where}: {kind} row has {'; '.join(parts)} key(s)")
    for key, types in spec.items():
        if not isinstance(row[key], types) or (isinstance(row[key], bool) and bool not in types):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise InvalidInput(f"{where}: {kind} {key!r} must be {names}, got {shown(row[key])}")
        if isinstance(row[key], str):
            check_storable(row[key], f"{where}: {kind} {key}")
    return kind


def check_header(row: Any) -> Row:
    """The header of an export, or InvalidInput saying why this is not one we can read."""
    where = "row 1"
    if not isinstance(row, dict) or row.get("type") != "header" or row.get("format") != FORMAT:
        raise InvalidInput(
            f"{where}: not a linkmem export (the first row must be the header written by "
            "`linkmem export`)"
        )
    check_fields(row, where)
    if row["version"] > VERSION:
        raise InvalidInput(
            f"{where}: export format version {row['version']} is newer than this linkmem "
            f"reads ({VERSION}); upgrade linkmem"
        )
    if row["vector_encoding"] != VECTOR_ENCODING:
        raise InvalidInput(f"{where}: unknown vector_encoding {shown(row['vector_encoding'])}")
    return row


def check_embedder(header: Row, stored: str | None, dim: int) -> None:
    """Refuse an export whose vectors were made by another embedder than the target's."""
    if header["dim"] != dim or (stored and header["embedder"] and stored != header["embedder"]):
        raise EmbedderMismatch(
            f"the export was written with embedder {header['embedder']} ({header['dim']} dims) "
            f"but the target store uses {stored or '?'} ({dim} dims); open the target with "
            "the export's embedder (setting embedder / LINKMEM_EMBEDDER), or use another store"
        )


def _scope(row: Row, where: str) -> Scope:
    try:
        return Scope(*(validate_scope_id(k, row[k]) for k in SCOPE_KEYS))
    except InvalidInput as e:
        raise InvalidInput(f"{where}: {e}") from e


def parse_memory(row: Row, dim: int, where: str) -> NewMemory:
    record = MemoryRecord(
        row["id"],
        row["text"],
        _scope(row, where),
        validate_metadata(row["metadata"], max_bytes=None, what=f"{where}: memory metadata"),
        row["created_at"],
        row["updated_at"],
        row["role"],
        row["actor_id"],
    )
    if record.scope.is_empty():
        raise InvalidInput(f"{where}: memory {record.id!r} has no user_id, agent_id or run_id")
    vector = decode_vector(row["vector"], dim, where)
    return NewMemory(record, vector, terms(record.text), _context(row.get("context"), where))


def _context(weights: dict[str, Any] | None, where: str) -> dict[str, int]:
    """A memory row's ``context`` as stored (1/CONTEXT_SCALE units): terms are non-empty
    storable text, weights positive finite numbers."""
    out: dict[str, int] = {}
    for term, weight in (weights or {}).items():
        ok = isinstance(weight, int | float) and not isinstance(weight, bool)
        if not term or not ok or not math.isfinite(weight) or weight <= 0:
            raise InvalidInput(
                f"{where}: memory context must map terms to positive numbers, got "
                f"{shown(term)}: {shown(weight)}; the file is damaged or was edited"
            )
        check_storable(term, f"{where}: memory context term")
        if (units := round(weight * CONTEXT_SCALE)) > 0:
            out[term] = units
    return out


@dataclass(frozen=True)
class ImportedEntity:
    """An entity as exported: ``NewEntity`` plus the time it was first seen."""

    entity: NewEntity
    created_at: str


def parse_entity(row: Row, dim: int, where: str) -> ImportedEntity:
    vector = decode_vector(row["vector"], dim, where)
    scope = _scope(row, where)
    entity = NewEntity(row["id"], row["text"], row["key"], row["kind"], scope, vector)
    if entity.scope.is_empty():
        raise InvalidInput(f"{where}: entity {entity.id!r} has no user_id, agent_id or run_id")
    return ImportedEntity(entity, row["created_at"])


def parse_history(row: Row, where: str) -> HistoryEvent:
    if row["event"] not in EVENTS:
        raise InvalidInput(f"{where}: history event must be one of {', '.join(EVENTS)}")
    return HistoryEvent(
        row["memory_id"],
        row["event"],
        row["old_text"],
        row["new_text"],
        row["created_at"],
        row["role"],
        row["actor_id"],
    )


@dataclass
class ImportBatch:
    """Consecutive rows of an export, written in one transaction."""

    first: int
    last: int = 0
    memories: list[NewMemory] = field(default_factory=list)
    entities: list[ImportedEntity] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # own links
    inherited: list[tuple[str, str]] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)

    @property
    def span(self) -> str:
        return f"rows {self.first}-{self.last}" if self.last > self.first else f"row {self.first}"

    def add(self, row: Any, number: int, dim: int) -> None:
        where = f"row {number}"
        kind = check_fields(row, where)
        if kind == "memory":
            self.memories.append(parse_memory(row, dim, where))
        elif kind == "entity":
            self.entities.append(parse_entity(row, dim, where))
        elif kind == "link":
            links = self.inherited if row.get("inherited") else self.links
            links.append((row["memory_id"], row["entity_id"]))
        elif kind == "history":
            self.history.append(parse_history(row, where))
        else:
            raise InvalidInput(f"{where}: a second header; an export has exactly one")
        self.last = number

    def counts(self) -> Counter[str]:
        return Counter(
            memory=len(self.memories),
            entity=len(self.entities),
            link=len(self.links) + len(self.inherited),
            history=len(self.history),
        )


def import_batches(rows: Iterator[Any], size: int, dim: int) -> Iterator[ImportBatch]:
    """Parse and check the rows after the header, ``size`` rows per batch."""
    validate_batch_size(size)
    batch = ImportBatch(first=2)
    for number, row in enumerate(rows, 2):
        batch.add(row, number, dim)
        if number - batch.first + 1 >= size:
            yield batch
            batch = ImportBatch(first=number + 1)
    if batch.last:
        yield batch


T = TypeVar("T")


def runs(items: Sequence[T], key: Callable[[T], Hashable]) -> Iterator[list[T]]:
    """Consecutive items with the same key, in order (grouping them by scope this way keeps
    the file's insertion order, which decides ties in "newest first" listings)."""
    group: list[T] = []
    for item in items:
        if group and key(group[-1]) != key(item):
            yield group
            group = []
        group.append(item)
    if group:
        yield group
