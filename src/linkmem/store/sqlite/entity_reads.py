"""The SQLite store's reads for its entity cache (``caches.entity_records``; a search's
``caches.entity_reads.EntityReads`` asks them): the scopes a search opens with their versions
and matrices, entity records with their link lists, and the second hop's index, each from one
snapshot."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from linkmem.store.caches.entity_reads import ScopeView
from linkmem.store.caches.entity_records import EntityCache, HopIndex, LoadedEntities
from linkmem.store.sqlite.add_log import catch_up
from linkmem.store.sqlite.connection import Connection
from linkmem.store.sqlite.entity_cache import entity_from_row, read_hop_index
from linkmem.store.sqlite.sql import scope_where
from linkmem.types import Scope


class EntitySearchReads:
    """A mixin of ``EntityTables``: the reads its entity cache is filled from."""

    db: Connection
    c: str
    entity_cache: EntityCache
    memory_vectors: Any
    _entity_columns: Callable[[], str]  # ``EntityTables``'

    def _entity_scope_views(self, scope: Scope) -> list[ScopeView]:
        """The scopes ``scope`` matches with their versions and memory matrices, each search
        counted (``entity_cache``); a scope whose matrix is at another version is left out."""
        where, args = scope_where(scope)
        views = []
        for scope_id, ent_version, mem_version in self.db.rows(
            f"SELECT s.id, s.ent_version, s.mem_version FROM {self.c}_scopes s WHERE {where}",
            args,
        ):
            matrix = self.memory_vectors.get(scope_id, mem_version)  # type: ignore[attr-defined]
            if matrix.version == mem_version:
                versions = (ent_version, mem_version)
                catch_up(self, scope_id, versions)  # across other processes' adds (``add_log``)
                searches = self.entity_cache.opened(scope_id, versions)
                views.append(ScopeView(scope_id, versions, matrix, searches))
        return views

    def _read_entities(self, ids: Sequence[str], lists_up_to: float) -> LoadedEntities:
        """The records of ``ids`` and the row keys of the memories linked to those of at most
        ``lists_up_to`` own links, with the versions of their scopes, from one snapshot
        (``entity_cache``)."""
        loaded = LoadedEntities({}, {}, {}, {}, True)
        with self.db.snapshot() as committed:
            for row in self.db.rows(
                f"SELECT e.scope_id, {self._entity_columns()} FROM {self.c}_entities e JOIN "
                f"{self.c}_scopes s ON s.id = e.scope_id "
                "WHERE e.id IN (SELECT value FROM json_each(?))",
                [json.dumps(list(ids))],
            ):
                loaded.scopes[row[1]] = row[0]
                loaded.records[row[1]] = entity_from_row(row[1:])
            listed = [i for i, r in loaded.records.items() if r.link_count <= lists_up_to]
            for entity_id, rowids in self.db.rows(  # each in row key order (primary key)
                f"SELECT e.id, (SELECT group_concat(memory) FROM {self.c}_links "
                f"WHERE entity = e.rowid) FROM {self.c}_entities e "
                "WHERE e.id IN (SELECT value FROM json_each(?))",
                [json.dumps(listed)],
            ):
                found = np.fromstring(rowids, np.int64, sep=",") if rowids else ()
                loaded.links[entity_id] = np.sort(np.asarray(found, dtype=np.int64))
            loaded.versions.update(
                (s, (ent, mem))
                for s, ent, mem in self.db.rows(
                    f"SELECT id, ent_version, mem_version FROM {self.c}_scopes "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    [json.dumps(sorted(set(loaded.scopes.values())))],
                )
            )
        return replace(loaded, committed=committed)

    def _read_hop_index(
        self, scope_id: int, max_links: int
    ) -> tuple[HopIndex, tuple[int, int] | None, bool]:
        """The scope's ``HopIndex`` with the versions it was read at and whether from
        committed data (``entity_cache.read_hop_index``)."""
        return read_hop_index(self, scope_id, max_links)
