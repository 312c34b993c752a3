"""The ``Memory`` façade: the one core that the CLI, REST and MCP shells call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkmem import validation as v
from linkmem.components import LazyExtractor, build_embedder, build_llm, describe, infer_add
from linkmem.config import RetrievalConfig, Settings, resolve_settings
from linkmem.embed.base import Embedder
from linkmem.encoding import encode_batch
from linkmem.entities.inspect import EntityInspection
from linkmem.entities.linker import apply_links
from linkmem.errors import EmbedderMismatch, NotFound
from linkmem.extract.base import EntityExtractor
from linkmem.filters import parse_filters
from linkmem.integrity import check_store, upgrade_terms
from linkmem.keys import KeyRing
from linkmem.rank.calibration import CosineCalibration
from linkmem.rank.terms import terms
from linkmem.records import history_event, new_records, now, updated_record
from linkmem.search import SearchRequest, Signals, run_search
from linkmem.staged_write import Models, write_new
from linkmem.store.base import Store
from linkmem.store.registry import open_store
from linkmem.tenancy import Tenant, TenantMemory
from linkmem.threads import single_threaded_blas
from linkmem.transfer import Transfer
from linkmem.types import MemoryRecord, Scope

if TYPE_CHECKING:
    from linkmem.infer import ChatClient

Result = dict[str, Any]


def _in_scope(found: list[MemoryRecord], memory_id: str, scope: Scope) -> MemoryRecord:
    if not found or not scope.contains(found[0].scope):
        raise NotFound(f"no memory with id {v.shown(memory_id)} in this scope; check the id")
    return found[0]


class Memory(EntityInspection, Transfer):
    """Long-term memory for agents: add, search, get, update, delete, with entity linking.

    ``Memory()`` stores in the per-user data folder; ``Memory("memory.db")`` in that file;
    any setting can be given as a keyword (``store="postgres"``, ``postgres={"dsn": ...}``).
    ``memory.keys`` holds the store's API keys (``linkmem.keys.KeyRing``), which a server
    checks each request against.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        extractor: EntityExtractor | None = None,
        config_file: str | Path | None = None,
        **settings: Any,
    ) -> None:
        if path is not None:
            settings["sqlite.path"] = str(path)
        self.settings: Settings = resolve_settings(settings, config_file=config_file)
        self.embedder = embedder or build_embedder(self.settings)
        self.extractor: EntityExtractor | None = None
        if self.settings.entities:
            self.extractor = extractor or LazyExtractor(self.settings)
        self.llm: ChatClient | None = build_llm(self.settings)  # infer=True; None: not set
        self.store: Store = open_store(self.settings, self.embedder.dim)
        self._check_embedder()
        self._upgrade_terms()
        self.keys = KeyRing(self.store)
        self._calibration = CosineCalibration(self.store, self.embedder)

    @property
    def retrieval(self) -> RetrievalConfig:
        """``settings.retrieval`` calibrated for this store's embedder (``linkmem.rank.
        calibration``): what every search and write uses."""
        return self._calibration.apply(self.settings.retrieval)

    def _check_embedder(self) -> None:
        stored = self.store.get_meta("embedder")
        current = f"{self.embedder.model_id}/{self.embedder.dim}"
        if stored is None:
            self.store.set_meta("embedder", current)
        elif stored != current:
            self.store.close()
            raise EmbedderMismatch(
                f"this store was written with embedder {stored} but {current} is configured; "
                "configure the same embedder or use another store path/collection"
            )

    def _upgrade_terms(self) -> None:
        """A store indexed with an older linkmem's keyword terms is re-indexed once."""
        try:
            upgrade_terms(self.store)
        except BaseException:
            self.store.close()
            raise

    # writes ----------------------------------------------------------------------------------
    def add(
        self,
        messages: Any,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = False,
        timestamp: Any = None,
    ) -> Result:
        """Remember a text, a message dict or a list of messages (each non-system message is
        one memory). The whole call is one embedding batch and one transaction.

        ``timestamp`` (ISO-8601 string, datetime or epoch seconds; default now) is when it
        was said: the memories' ``created_at``, against which "last week" is read."""
        v.validate_timestamp(timestamp)  # one value: add_batch would take a list of one
        return self.add_batch(
            [messages],
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            metadata=[metadata],
            infer=infer,
            timestamp=timestamp,
        )

    def add_batch(
        self,
        items: Sequence[Any],
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
        infer: bool = False,
        timestamp: Any = None,
    ) -> Result:
        """Add many items (each as ``add`` takes it) in one scope, with per-item metadata.
        ``timestamp``: one for the call, or a list with one (or None) per item.

        ``infer=True``: an LLM extracts facts and reconciles them with the scope's memories
        (ADD / UPDATE / DELETE / NONE events; ``linkmem.infer``)."""
        scope = v.make_scope(user_id, agent_id, run_id)
        items = v.validate_items(items)
        metas = v.validate_metadata_list(metadata, len(items))
        times = v.validate_timestamps(timestamp, len(items))
        if infer:
            if any(times):
                raise v.InvalidInput(
                    "timestamp is not supported with infer=True; give each message a "
                    "'created_at' to date its facts, or add without infer"
                )
            return infer_add(self, items, metas, scope)
        settings = self.settings
        records = new_records(
            items, metas, scope, settings.max_text_chars, settings.max_metadata_bytes, times
        )
        with single_threaded_blas():
            self._write_new(records)
        return {"results": [{**r.to_dict(), "event": "ADD"} for r in records]}

    def _write_new(self, records: list[MemoryRecord]) -> None:
        write_new(self.store, Models(self.embedder, self.extractor, self.retrieval), records)

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
    ) -> Result:
        """Change a memory's text (re-embedded, re-indexed, re-linked) and/or merge metadata.

        The old record is read inside the write transaction, with its row locked: two updates
        of one memory never lose each other's change, and one racing a delete is ``NotFound``.
        """
        scope = v.lookup_scope(user_id, agent_id, run_id)
        self._get_in_scope(memory_id, scope)
        if text is None and metadata is None:
            raise v.InvalidInput("update needs text or metadata; pass at least one")
        new_text = None if text is None else v.validate_text(text, self.settings.max_text_chars)
        new_meta = v.validate_metadata(metadata, self.settings.max_metadata_bytes)
        encoded = None
        if new_text is not None:
            with single_threaded_blas():  # the models run before the transaction, not inside it
                encoded = encode_batch([new_text], self.embedder, self.extractor, self.retrieval)
        vector = None if encoded is None else encoded.vectors[0]
        plan = None if encoded is None else encoded.plan

        def write() -> MemoryRecord:
            old = self._lock_in_scope(memory_id, scope)
            record = updated_record(old, new_text, new_meta)
            v.validate_metadata(record.metadata, self.settings.max_metadata_bytes)  # merged
            changed = record.text != old.text
            self.store.update_memory(
                record, vector if changed else None, terms(record.text) if changed else None
            )
            if changed:
                touched = self.store.unlink_memories([old.id])
                if plan is not None:
                    apply_links(self.store, old.scope, [old.id], plan, self.retrieval)
                self.store.drop_orphan_entities(touched)
            self.store.append_history(
                [history_event(old, "UPDATE", old.text, record.text, record.updated_at)]
            )
            return record

        record = self.store.run_in_transaction(write)
        return {"results": [{**record.to_dict(), "event": "UPDATE"}]}

    def delete(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> Result:
        """Delete one memory, its links, and entities left with no links."""
        scope = v.lookup_scope(user_id, agent_id, run_id)
        self._get_in_scope(memory_id, scope)

        def write() -> MemoryRecord:
            record = self._lock_in_scope(memory_id, scope)
            self._delete_records([record])
            return record

        record = self.store.run_in_transaction(write)
        return {"results": [{"id": record.id, "event": "DELETE"}]}

    def delete_all(
        self,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        across_users: bool = False,
    ) -> Result:
        """Delete every memory of a scope (at least one scope id is required).

        A scope without ``user_id`` that holds memories of several users (an agent that
        serves many users, say) is refused unless ``across_users=True`` says so.
        """
        scope = v.make_scope(user_id, agent_id, run_id)

        def write() -> list[MemoryRecord]:
            records = self.store.lock_memories(self.store.memory_ids(scope))
            users = {r.scope.user_id for r in records}
            if scope.user_id is None and len(users) > 1 and not across_users:
                raise v.InvalidInput(
                    f"this scope holds memories of {len(users)} users; pass user_id to delete "
                    "one user's memories, or across_users=True to delete them all"
                )
            self._delete_records(records)
            return records

        records = self.store.run_in_transaction(write)
        return {"results": [{"id": r.id, "event": "DELETE"} for r in records]}

    def _delete_records(self, records: list[MemoryRecord]) -> None:
        ids = [r.id for r in records]
        at = now().isoformat()
        with self.store.transaction():
            touched = self.store.unlink_memories(ids)
            self.store.delete_memories(ids)
            self.store.drop_orphan_entities(touched)
            self.store.append_history(
                [history_event(r, "DELETE", r.text, None, at) for r in records]
            )

    def reset(self) -> Result:
        """Delete everything in this collection: memories, entities, links and history."""
        self.store.reset()
        return {"results": [], "reset": True}

    # reads -----------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 10,
        threshold: float | None = None,
        explain: bool = False,
        signals: Signals | Mapping[str, bool] | None = None,
    ) -> Result:
        """Hybrid search (dense + BM25 + entity links) in a scope; ``threshold`` gates the
        returned score; ``explain=True`` adds each score component."""
        signals = Signals.of(signals)
        scope_kwargs, rest = v.lift_scope_from_filters(
            filters, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        )
        request = SearchRequest(
            query=v.validate_text(query, self.settings.max_text_chars, "query"),
            scope=v.make_scope(**scope_kwargs),
            top_k=v.validate_top_k(top_k),
            filters=parse_filters(rest),
            threshold=v.validate_threshold(threshold),
            signals=signals or Signals(),
        )
        if self.extractor is None:  # entity linking off: the store holds no entities
            request = replace(request, signals=replace(request.signals, entities=False))
        with single_threaded_blas():
            hits = run_search(request, self.store, self.embedder, self.retrieval)
        return {"results": [h.to_dict(explain) for h in hits]}

    def get(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> Result:
        """One memory by id (checked against the scope when one is given)."""
        return self._get_in_scope(memory_id, v.lookup_scope(user_id, agent_id, run_id)).to_dict()

    def get_all(
        self,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Result:
        """A scope's memories, newest first."""
        scope_kwargs, rest = v.lift_scope_from_filters(
            filters, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        )
        scope = v.make_scope(**scope_kwargs)
        records = self.store.list_memories(
            scope, parse_filters(rest), v.validate_top_k(limit, "limit"), v.validate_offset(offset)
        )
        return {"results": [r.to_dict() for r in records]}

    def count(self, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> int:
        """How many memories a scope holds (no scope: the whole collection)."""
        return self.store.count_memories(v.lookup_scope(user_id, agent_id, run_id))

    def history(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> Result:
        """ADD / UPDATE / DELETE events of a memory, oldest first.

        Kept after delete, but a deleted memory's scope is no longer known: its history is
        returned only to calls by id alone (no scope), never to a scoped (tenant's) call.
        """
        memory_id = v.validate_memory_id(memory_id)
        scope = v.lookup_scope(user_id, agent_id, run_id)
        live = self.store.get_memories([memory_id])
        if live and not scope.contains(live[0].scope):
            raise NotFound(f"no memory with id {v.shown(memory_id)} in this scope; check the id")
        events = self.store.history(memory_id)
        if not events or (not live and not scope.is_empty()):
            raise NotFound(f"no memory or history with id {v.shown(memory_id)} in this scope")
        return {"results": [e.to_dict() for e in events]}

    def _get_in_scope(self, memory_id: Any, scope: Scope) -> MemoryRecord:
        found = self.store.get_memories([v.validate_memory_id(memory_id)])
        return _in_scope(found, memory_id, scope)

    def _lock_in_scope(self, memory_id: str, scope: Scope) -> MemoryRecord:
        """Inside a write transaction: the record, locked until the transaction ends."""
        return _in_scope(self.store.lock_memories([memory_id.strip()]), memory_id, scope)

    def for_tenant(self, tenant: Tenant) -> TenantMemory:
        """This memory as one tenant sees it: every call pinned to the tenant's scope
        (``linkmem.tenancy``); what a server hands each request."""
        return TenantMemory(self, tenant)

    # lifecycle -------------------------------------------------------------------------------
    def check(self, *, repair: bool = False) -> dict[str, Any]:
        """Verify the store's invariants (``linkmem.store.audit``): ``{"ok", "repaired",
        "memories", "entities", "problems": [{"kind", "count", "detail", "examples"}]}``;
        ``repair=True`` rebuilds what can be rebuilt from the texts, then checks again."""
        with single_threaded_blas():
            return check_store(self.store, self.embedder, repair)

    def warm_up(self) -> None:
        """Load the models now rather than on the first call that needs them (a server does
        this at start); raises ``ModelUnavailable`` when one cannot be loaded."""
        with single_threaded_blas():
            self.embedder.embed_batch(["warm up"])
        getter = getattr(self.extractor, "get", None)
        if getter is not None:
            getter()

    def status(self) -> dict[str, Any]:
        """What ``linkmem doctor`` shows: store, models, pipelines, counts."""
        info = self.store.info()
        return {
            "store": {"backend": info.backend, "location": info.location, **info.details},
            "embedder": {"model": self.embedder.model_id, "dim": self.embedder.dim},
            "entities": describe(self.extractor) if self.extractor else "disabled",
        }

    def close(self) -> None:
        self.store.close()
        if self.llm is not None:
            self.llm.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
