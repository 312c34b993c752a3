"""The storage contract: everything ``Memory`` needs from a backend.

Stores are primitive and batch-first: they keep memories, vectors, keyword postings, entities,
links and history, and return candidate lists ``(id, score)``. Fusion and boosts live in
``linkmem.rank``, never in a store.

Scopes: a write uses the exact scope of its records (unset ids are stored as ''). A read takes a
``Scope`` whose set ids must all match (subset match: ``user_id="u"`` also sees memories that
carry an agent_id). Every write method runs inside ``transaction()``; called outside one, it
opens its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np

from linkmem.filters import Node
from linkmem.types import EntityRecord, HistoryEvent, MemoryRecord, Scope


class MemoryDate(NamedTuple):
    """What the time signal of a search reads of a memory (``linkmem.rank.time_boost``; a
    store's optional ``memory_dates``)."""

    id: str
    text: str
    created_at: str | None


@dataclass(frozen=True)
class Capabilities:
    """What a backend does natively; the façade reads these, never the class."""

    native_bm25: bool = False
    ann_index: bool = False
    filtered_ann: bool = False
    multi_process_writes: bool = True


@dataclass(frozen=True)
class NewMemory:
    """A memory to write, with its vector and BM25 terms (repeats = term frequency), and the
    context terms its keyword document also carries (``linkmem.rank.neighbour_terms``:
    ``{term: weight in 1/CONTEXT_SCALE units}``, empty for a memory written alone)."""

    record: MemoryRecord
    vector: np.ndarray
    terms: list[str]
    context: dict[str, int] = field(default_factory=dict)


def posting_rows(
    terms: Sequence[str], context: dict[str, int]
) -> list[tuple[str, int, int, int, int]]:
    """``(term, tf, doc_len, ctx, ctx_len)`` of a memory's own terms and context terms."""
    own = Counter(terms)
    doc_len, ctx_len = len(terms), sum(context.values())
    return [
        (t, own.get(t, 0), doc_len, context.get(t, 0), ctx_len)
        for t in dict.fromkeys([*own, *context])
    ]


@dataclass(frozen=True)
class NewEntity:
    """An entity to insert into the exact ``scope`` (ignored on key conflict)."""

    id: str
    text: str
    key: str
    kind: str
    scope: Scope
    vector: np.ndarray


@dataclass(frozen=True)
class StoreInfo:
    """What ``linkmem doctor`` shows about a store."""

    backend: str
    location: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ApiKeyRow:
    """One stored API key (``linkmem.keys``): never the secret, only its SHA-256 hex digest
    ``key_hash`` and its first characters ``prefix``. ``user_id`` / ``agent_id`` are the
    tenant it is bound to (None when unset; both None for an admin key); ``revoked_at`` is
    None while the key works."""

    id: str
    key_hash: str
    name: str | None
    role: str
    user_id: str | None
    agent_id: str | None
    created_at: str
    revoked_at: str | None
    prefix: str


if TYPE_CHECKING:
    from linkmem.store.audit import AuditReport

T = TypeVar("T")


@runtime_checkable
class Store(Protocol):
    capabilities: Capabilities

    # lifecycle -------------------------------------------------------------------------------
    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all; re-entrant (inner blocks join)."""
        ...

    def run_in_transaction(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction; a backend may re-run it after a deadlock or a
        serialisation failure, so ``work`` must do nothing but store calls."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def info(self) -> StoreInfo: ...

    # memories --------------------------------------------------------------------------------
    def put_memories(self, memories: Sequence[NewMemory]) -> None:
        """Insert new memories (record, vector, postings) in one batch."""
        ...

    def update_memory(
        self, record: MemoryRecord, vector: np.ndarray | None, terms: list[str] | None
    ) -> None:
        """Replace text/metadata/updated_at; vector and terms only when given (new terms
        replace the memory's own postings; its context terms are kept)."""
        ...

    def delete_memories(self, ids: Sequence[str]) -> None:
        """Remove memories, their vectors, postings and links (history is kept)."""
        ...

    def get_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records that exist, in the order of ``ids``."""
        ...

    def lock_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """``get_memories`` inside a transaction, with those rows locked against other writers
        until it ends: a read-modify-write on them cannot lose an update."""
        ...

    def list_memories(
        self, scope: Scope, filters: Node | None, limit: int, offset: int = 0
    ) -> list[MemoryRecord]:
        """Newest first (created_at, then id)."""
        ...

    def memory_ids(self, scope: Scope) -> list[str]: ...

    def count_memories(self, scope: Scope | None = None) -> int: ...

    # retrieval -------------------------------------------------------------------------------
    def vector_search(
        self,
        vector: np.ndarray,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top ``k`` by cosine similarity (1 = same direction); with ``ids``, exactly those
        memories that pass scope and filters are scored."""
        ...

    def keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top ``k`` by raw BM25 over unique ``terms``, with document frequencies, document
        count and average length taken over the searched scope only. Only hits > 0."""
        ...

    # entities (the second collection) ----------------------------------------------------------
    def find_entities(self, scope: Scope, keys: Sequence[str]) -> dict[str, str]:
        """Exact lookup by normalised key in the exact ``scope``: key -> entity id."""
        ...

    def entities_by_key(
        self, scope: Scope, keys: Sequence[str]
    ) -> dict[str, tuple[str, np.ndarray]]:
        """Exact lookup by normalised key in the scopes ``scope`` covers (as a search):
        key -> (kind, vector) of an entity with that key (the oldest, when several scopes
        hold one)."""
        ...

    def nearest_entities(
        self, scope: Scope, vectors: np.ndarray, k: int, min_similarity: float, exact_scope: bool
    ) -> list[list[tuple[str, float]]]:
        """Per query vector, the entities with cosine >= ``min_similarity``, best first.
        ``exact_scope`` restricts to entities of exactly ``scope`` (the write side)."""
        ...

    def insert_entities(self, entities: Sequence[NewEntity]) -> dict[str, str]:
        """Insert; a key that already exists in the scope keeps its row. Returns key -> id."""
        ...

    def link(self, pairs: Sequence[tuple[str, str]], own: bool = True) -> None:
        """Add ``(memory_id, entity_id)`` links; existing links are kept once. ``own``: an
        entity the memory's text names; else one it inherits (``linkmem.entities.inherit``),
        which boosts it but counts in no ``link_count`` and leads no second hop. An own link
        written over an inherited one turns it own."""
        ...

    def unlink_memories(self, memory_ids: Sequence[str]) -> list[str]:
        """Remove every link of these memories; returns the entity ids that lost links."""
        ...

    def drop_orphan_entities(self, entity_ids: Sequence[str]) -> int:
        """Delete those of ``entity_ids`` that have no own links left (and their inherited
        links); returns how many."""
        ...

    def count_entities(self) -> int:
        """Entities in the whole collection."""
        ...

    def get_entities(self, ids: Sequence[str]) -> list[EntityRecord]: ...

    def list_entities(
        self, scope: Scope, order: str, limit: int, offset: int = 0
    ) -> list[EntityRecord]:
        """``order``: "links" (most linked first), "text" or "recent"."""
        ...

    def memories_of_entities(
        self, entity_ids: Sequence[str], own_only: bool = False
    ) -> dict[str, list[str]]:
        """entity id -> linked memory ids (those whose own link it is, with ``own_only``)."""
        ...

    def entities_of_memories(self, memory_ids: Sequence[str]) -> dict[str, list[EntityRecord]]: ...

    def cooccurring_entities(self, entity_id: str, limit: int) -> list[tuple[EntityRecord, int]]:
        """Entities sharing memories with ``entity_id``, with the number of shared memories."""
        ...

    def merge_entities(self, keep_id: str, drop_id: str) -> None:
        """Move ``drop_id``'s links to ``keep_id`` (no duplicate links) and delete ``drop_id``."""
        ...

    def rename_entity(self, entity_id: str, text: str, key: str, vector: np.ndarray) -> None: ...

    # history ---------------------------------------------------------------------------------
    def append_history(self, events: Sequence[HistoryEvent]) -> None: ...

    def history(self, memory_id: str) -> list[HistoryEvent]:
        """Oldest first."""
        ...

    # transfer (the export format: ``linkmem.store.transfer``) ----------------------------------
    def export_records(self, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
        """The whole collection as JSON-ready rows from one consistent snapshot: a header,
        then memories, entities, links and history, ``batch_size`` rows per read."""
        ...

    def import_records(
        self, rows: Iterable[dict[str, Any]], batch_size: int = 1000, dry_run: bool = False
    ) -> dict[str, int]:
        """Write exported rows keeping ids, timestamps and vectors, one transaction per
        ``batch_size`` rows. Raises ``EmbedderMismatch`` for another embedder's export and
        ``InvalidInput`` (nothing of that batch written) for ids that already exist;
        ``dry_run`` checks everything without writing. Returns rows per kind."""
        ...

    # integrity (``linkmem.store.audit``) --------------------------------------------------------
    def audit(self, batch_size: int = 1000) -> AuditReport:
        """Every invariant of a consistent store, checked from one snapshot."""
        ...

    def repair_bookkeeping(self) -> None:
        """Drop stray postings and recompute each scope's BM25 statistics from its memories."""
        ...

    # API keys (``linkmem.keys``; not part of export, restore or reset) ----------------------
    def put_api_key(self, row: ApiKeyRow) -> None:
        """Insert a new key; ids and hashes are unique (a repeat is a ``StoreError``)."""
        ...

    def api_keys(self, include_revoked: bool) -> list[ApiKeyRow]:
        """The collection's keys, oldest first; revoked ones only with ``include_revoked``."""
        ...

    def api_key_by_hash(self, key_hash: str) -> ApiKeyRow | None:
        """The key whose secret hashes to ``key_hash``, revoked or not; None if there is none."""
        ...

    def revoke_api_key(self, key_id: str, at: str) -> ApiKeyRow | None:
        """Mark the key revoked at ``at`` (a key revoked before keeps its first time);
        returns the key, or None for an unknown id."""
        ...

    def has_active_api_keys(self) -> bool:
        """Whether the collection has at least one key that is not revoked."""
        ...

    # housekeeping ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Delete everything: memories, entities, links, history. Meta and API keys are kept,
        so an admin who resets the data is not locked out of a server that checks keys."""
        ...


def record_from_row(row: Sequence[Any], metadata: dict[str, Any]) -> MemoryRecord:
    """A memory from the column order both backends select: id, text, metadata, created_at,
    updated_at, role, actor_id, user_id, agent_id, run_id ('' = unset)."""
    return MemoryRecord(
        id=row[0],
        text=row[1],
        scope=Scope(*(v or None for v in row[7:10])),
        metadata=metadata,
        created_at=row[3],
        updated_at=row[4],
        role=row[5],
        actor_id=row[6],
    )


def iter_chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
