"""Memories, postings and vector search on SQLite (keyword search: ``keyword``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from linkmem.errors import NotFound
from linkmem.filters import Node
from linkmem.store.base import MemoryDate, NewMemory, iter_chunks, posting_rows
from linkmem.store.base import record_from_row as base_record_from_row
from linkmem.store.caches.keyword_postings import KeywordCache
from linkmem.store.sqlite.connection import CHUNK, Connection, placeholders
from linkmem.store.sqlite.keyword import KeywordTables
from linkmem.store.sqlite.record_cache import RecordCache
from linkmem.store.sqlite.sql import exact_scope_params, filter_sql, scope_where
from linkmem.store.vectors import (
    LoadedScope,
    Loader,
    MatrixCache,
    ScopeMatrix,
    decode_many,
    encode,
    score_ids,
    top_k_many,
)
from linkmem.types import MemoryRecord, Scope

if TYPE_CHECKING:  # write_follow reads the store
    from linkmem.store.sqlite.write_follow import WriteFollower

_INSERT_POSTINGS = (
    "INSERT INTO {c}_postings (scope_id, memory, term, tf, doc_len, ctx, ctx_len) "
    "VALUES (?,?,?,?,?,?,?)"
)
_MEMORY_COLUMNS = (
    "m.id, m.text, m.metadata, m.created_at, m.updated_at, m.role, m.actor_id, "
    "s.user_id, s.agent_id, s.run_id"
)


def record_from_row(row: Sequence[Any]) -> MemoryRecord:
    return base_record_from_row(row, json.loads(row[2]))


#: Rows a scope load decodes per step.
_LOAD_PAGE = 1024


def scope_loader(
    db: Connection, table: str, scopes: str, version_column: str, rewrites_column: str
) -> Loader:
    """Reads one scope's vectors of ``table`` and its version in one snapshot, a page of rows
    at a time into one matrix (a list of every row's blob beside the matrix held the scope's
    vectors twice while it loaded: 2 x 150 MB for a 100k-memory scope). Given the matrix
    cached before, when the scope's ``rewrites_column`` (``schema.m006_rewrite_counts``) is
    still the one it was read at, only the rows after its last rowid: the rows added since
    (an insert takes a rowid above every row's; a delete, the only way to free the highest,
    counts as a rewrite)."""

    def load(scope_id: int, since: ScopeMatrix | None) -> LoadedScope:
        with db.snapshot() as committed:
            version, rewrites = db.rows(
                f"SELECT {version_column}, {rewrites_column} FROM {scopes} WHERE id = ?",
                (scope_id,),
            )[0]
            after = None
            if committed and since is not None and since.rewrites == rewrites:
                after = int(since.rowids[-1])
            rowids, ids, matrix = _read_rows(db, table, scope_id, after)
        return LoadedScope(version, rowids, ids, [], committed, matrix, rewrites, after)

    return load


def _read_rows(
    db: Connection, table: str, scope_id: int, after: int | None
) -> tuple[np.ndarray, list[str], np.ndarray | None]:
    """The rowids, ids and vectors of the scope's rows of ``table`` (after rowid ``after``
    when given), in rowid order; the caller holds a snapshot."""
    where, args = "scope_id = ?", [scope_id]
    if after is not None:
        where, args = "scope_id = ? AND rowid > ?", [scope_id, after]
    rows = f"{table} INDEXED BY {table}_scope_rowids"  # seeks to the rowids (``schema.m007``)
    n = db.rows(f"SELECT count(*) FROM {rows} WHERE {where}", args)[0][0]
    cursor = db.raw.execute(  # the snapshot holds the connection's lock
        f"SELECT rowid, id, embedding FROM {rows} WHERE {where} ORDER BY rowid", args
    )
    rowids, ids, matrix = np.empty(n, dtype=np.int64), [], None
    while rows := cursor.fetchmany(_LOAD_PAGE):
        if matrix is None:
            matrix = np.empty((n, len(rows[0][2]) // 4), dtype=np.float32)
        start, stop = len(ids), len(ids) + len(rows)
        matrix[start:stop] = decode_many([r[2] for r in rows], matrix.shape[1])
        rowids[start:stop] = [r[0] for r in rows]
        ids.extend(r[1] for r in rows)
    return rowids, ids, matrix


class MemoryTables(KeywordTables):
    """The memory half of the SQLite store."""

    db: Connection
    c: str
    follower: WriteFollower

    def _init_memories(self, dim: int, cache_bytes: int) -> None:
        loader = scope_loader(self.db, self.c, f"{self.c}_scopes", "mem_version", "mem_rewrites")
        self.memory_vectors = MatrixCache(dim, loader, cache_bytes)
        self.keyword_cache = KeywordCache()
        self.record_cache = RecordCache()

    # scopes ----------------------------------------------------------------------------------
    def _scope_id(self, scope: Scope, create: bool = True) -> int | None:
        params = exact_scope_params(scope)
        if create:
            self.db.run(
                f"INSERT OR IGNORE INTO {self.c}_scopes (user_id, agent_id, run_id) VALUES (?,?,?)",
                params,
            )
        rows = self.db.rows(
            f"SELECT id FROM {self.c}_scopes WHERE user_id = ? AND agent_id = ? AND run_id = ?",
            params,
        )
        return rows[0][0] if rows else None

    def _matching_scopes(self, scope: Scope, version: str = "mem_version") -> list[tuple[int, int]]:
        where, args = scope_where(scope)
        return self.db.rows(f"SELECT s.id, s.{version} FROM {self.c}_scopes s WHERE {where}", args)

    def _version(self, scope_id: int, column: str) -> int:
        return self.db.rows(f"SELECT {column} FROM {self.c}_scopes WHERE id = ?", (scope_id,))[0][0]

    def _bump(self, scope_ids: Sequence[int], column: str, append: bool = False) -> None:
        """Move the scopes' ``column`` on; a write of more than an ``append`` spoils the
        transaction's carried entity cache (``write_follow``)."""
        if not append:
            self.follower.spoil()
        self.db.run_many(
            f"UPDATE {self.c}_scopes SET {column} = {column} + 1 WHERE id = ?",
            [(s,) for s in set(scope_ids)],
        )

    # writes ----------------------------------------------------------------------------------
    def put_memories(self, memories: Sequence[NewMemory]) -> None:
        with self.db.transaction():
            for scope, group in _group_by_scope(memories).items():
                self._put_scope_group(self._scope_id(scope), group)

    def _put_scope_group(self, scope_id: int, group: list[NewMemory]) -> None:
        rows = [
            (
                m.record.id,
                scope_id,
                m.record.text,
                json.dumps(m.record.metadata),
                m.record.role,
                m.record.actor_id,
                m.record.created_at,
                m.record.updated_at,
                len(m.terms),
                sum(m.context.values()),
                encode(m.vector),
            )
            for m in group
        ]
        self.db.run_many(
            f"INSERT INTO {self.c} (id, scope_id, text, metadata, role, actor_id, created_at, "
            "updated_at, doc_len, ctx_len, embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        rowids = self._rowids([m.record.id for m in group])
        per_memory = [posting_rows(m.terms, m.context) for m in group]
        postings = [
            (scope_id, rowids[m.record.id], *posting)
            for m, rows_of_memory in zip(group, per_memory, strict=True)
            for posting in rows_of_memory
        ]
        self.db.run_many(_INSERT_POSTINGS.format(c=self.c), postings)
        stamp = self.follower.stamp(scope_id)
        self.follower.began(scope_id, stamp)
        version = stamp[1]
        self.db.run(
            f"UPDATE {self.c}_scopes SET n_docs = n_docs + ?, total_len = total_len + ?, "
            "ctx_total = ctx_total + ?, mem_version = mem_version + 1 WHERE id = ?",
            (len(group), sum(len(m.terms) for m in group), sum(r[9] for r in rows), scope_id),
        )
        self._follow_in_caches(scope_id, version, group, rowids, per_memory)

    def _follow_in_caches(
        self,
        scope_id: int,
        version: int,
        group: list[NewMemory],
        rowids: dict[str, int],
        per_memory: list[list[tuple[str, int, int, int, int]]],
    ) -> None:
        """After commit, append the new rows to a cache that holds the scope as it was before
        this write. A cache that does not (nothing cached, or an earlier write of this
        transaction moved the scope on: a staged batch's later chunks) drops the scope now,
        so it reloads when next searched: a 100k-memory batch does not keep every chunk's
        vectors and postings (~4 KB per memory) until its one commit."""
        versions = (version, version + 1)
        if self.memory_vectors.holds(scope_id, version):
            ids = [m.record.id for m in group]
            keys = [rowids[i] for i in ids]
            vectors = np.stack([np.asarray(m.vector, dtype=np.float32) for m in group])
            self.db.after_commit(
                lambda: self.memory_vectors.extend(scope_id, versions, keys, ids, vectors)
            )
        else:
            self.memory_vectors.drop(scope_id)
        if self.keyword_cache.holds(scope_id, version):
            self.db.after_commit(lambda: self.keyword_cache.extend(scope_id, versions, per_memory))
        else:
            self.keyword_cache.drop(scope_id)

    def _rowids(self, ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in iter_chunks(list(ids), CHUNK):
            out.update(
                self.db.rows(
                    f"SELECT id, rowid FROM {self.c} WHERE id IN ({placeholders(len(chunk))})",
                    chunk,
                )
            )
        return out

    def update_memory(
        self, record: MemoryRecord, vector: np.ndarray | None, terms: list[str] | None
    ) -> None:
        with self.db.transaction():
            found = self.db.rows(
                f"SELECT rowid, scope_id, doc_len FROM {self.c} WHERE id = ?", (record.id,)
            )
            if not found:
                raise NotFound(f"no memory with id {record.id!r} to update")
            self.db.after_commit(self.record_cache.changed)
            rowid, scope_id, old_len = found[0]
            self.db.run(
                f"UPDATE {self.c} SET text = ?, metadata = ?, updated_at = ? WHERE rowid = ?",
                (record.text, json.dumps(record.metadata), record.updated_at, rowid),
            )
            if vector is not None:
                self.db.run(
                    f"UPDATE {self.c} SET embedding = ? WHERE rowid = ?", (encode(vector), rowid)
                )
            if terms is not None:
                self._replace_postings(rowid, scope_id, old_len, terms)
            if vector is not None or terms is not None:  # the version of vectors and postings
                self._bump([scope_id], "mem_version")

    def _replace_postings(self, rowid: int, scope_id: int, old_len: int, terms: list[str]) -> None:
        """New own terms; the context terms are kept (and the memory's context length
        recomputed from them)."""
        context = dict(
            self.db.rows(
                f"SELECT term, ctx FROM {self.c}_postings WHERE memory = ? AND ctx > 0", (rowid,)
            )
        )
        old_ctx = self.db.rows(f"SELECT ctx_len FROM {self.c} WHERE rowid = ?", (rowid,))[0][0]
        self.db.run(f"DELETE FROM {self.c}_postings WHERE memory = ?", (rowid,))
        self.db.run_many(
            _INSERT_POSTINGS.format(c=self.c),
            [(scope_id, rowid, *posting) for posting in posting_rows(terms, context)],
        )
        ctx_len = sum(context.values())
        self.db.run(
            f"UPDATE {self.c} SET doc_len = ?, ctx_len = ? WHERE rowid = ?",
            (len(terms), ctx_len, rowid),
        )
        self.db.run(
            f"UPDATE {self.c}_scopes SET total_len = total_len + ?, ctx_total = ctx_total + ? "
            "WHERE id = ?",
            (len(terms) - old_len, ctx_len - old_ctx, scope_id),
        )

    def delete_memories(self, ids: Sequence[str]) -> None:
        with self.db.transaction():
            self.db.after_commit(self.record_cache.changed)
            for chunk in iter_chunks(list(ids), CHUNK):
                self._delete_chunk(chunk)

    def _delete_chunk(self, ids: Sequence[str]) -> None:
        marks = placeholders(len(ids))
        rows = self.db.rows(
            f"SELECT rowid, scope_id, doc_len, ctx_len FROM {self.c} WHERE id IN ({marks})", ids
        )
        if not rows:
            return
        self.follower.spoil()
        rowids = [r[0] for r in rows]
        rmarks = placeholders(len(rowids))
        self.db.run(f"DELETE FROM {self.c}_postings WHERE memory IN ({rmarks})", rowids)
        self.db.run(f"DELETE FROM {self.c}_links WHERE memory IN ({rmarks})", rowids)
        self.db.run(f"DELETE FROM {self.c} WHERE rowid IN ({rmarks})", rowids)
        per_scope: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
        for _, scope_id, doc_len, ctx_len in rows:
            per_scope[scope_id][0] += 1
            per_scope[scope_id][1] += doc_len
            per_scope[scope_id][2] += ctx_len
        self.db.run_many(
            f"UPDATE {self.c}_scopes SET n_docs = n_docs - ?, total_len = total_len - ?, "
            "ctx_total = ctx_total - ?, mem_version = mem_version + 1 WHERE id = ?",
            [(n, length, ctx, s) for s, (n, length, ctx) in per_scope.items()],
        )

    # reads -----------------------------------------------------------------------------------
    def get_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        found: dict[str, MemoryRecord] = {}
        for chunk in iter_chunks(list(ids), CHUNK):
            rows = self.db.rows(
                f"SELECT {_MEMORY_COLUMNS} FROM {self.c} m JOIN {self.c}_scopes s "
                f"ON s.id = m.scope_id WHERE m.id IN ({placeholders(len(chunk))})",
                chunk,
            )
            found.update((r[0], record_from_row(r)) for r in rows)
        return [found[i] for i in ids if i in found]

    def memory_dates(self, ids: Sequence[str]) -> list[MemoryDate]:
        """The id, text and date of each of ``ids`` that exists, in their order: what a search's
        time signal reads of its first results (an optional read, ``linkmem.search``), without
        the scope's join and the metadata's parse (200 records read whole took ~3 ms)."""
        rows = self.db.rows(
            f"SELECT id, text, created_at FROM {self.c} "
            "WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps(list(ids))],
        )
        found = {row[0]: MemoryDate(*row) for row in rows}
        return [found[i] for i in ids if i in found]

    def lock_memories(self, ids: Sequence[str]) -> list[MemoryRecord]:
        with self.db.transaction():  # holds the file's write lock: no other writer runs
            return self.get_memories(ids)

    def list_memories(
        self, scope: Scope, filters: Node | None, limit: int, offset: int = 0
    ) -> list[MemoryRecord]:
        where, args = self._memory_where(scope, filters)
        rows = self.db.rows(
            f"SELECT {_MEMORY_COLUMNS} FROM {self.c} m JOIN {self.c}_scopes s "
            f"ON s.id = m.scope_id WHERE {where} "
            "ORDER BY m.created_at DESC, m.rowid DESC LIMIT ? OFFSET ?",
            [*args, limit, offset],
        )
        return [record_from_row(r) for r in rows]

    def _memory_where(
        self, scope: Scope, filters: Node | None, ids: Sequence[str] | None = None
    ) -> tuple[str, list[Any]]:
        scope_sql, scope_args = scope_where(scope)
        filter_part, filter_args = filter_sql(filters)
        where = f"{scope_sql} AND {filter_part}"
        args = [*scope_args, *filter_args]
        if ids is not None:
            where += f" AND m.id IN ({placeholders(len(ids))})"
            args += list(ids)
        return where, args

    def memory_ids(self, scope: Scope) -> list[str]:
        where, args = self._memory_where(scope, None)
        return [
            r[0]
            for r in self.db.rows(
                f"SELECT m.id FROM {self.c} m JOIN {self.c}_scopes s ON s.id = m.scope_id "
                f"WHERE {where} ORDER BY m.rowid",
                args,
            )
        ]

    def count_memories(self, scope: Scope | None = None) -> int:
        where, args = self._memory_where(scope or Scope(), None)
        return self.db.rows(
            f"SELECT count(*) FROM {self.c} m JOIN {self.c}_scopes s ON s.id = m.scope_id "
            f"WHERE {where}",
            args,
        )[0][0]

    # retrieval -------------------------------------------------------------------------------
    def vector_search(
        self,
        vector: np.ndarray,
        scope: Scope,
        k: int,
        filters: Node | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        if ids is not None and not ids:
            return []
        entries = self._scope_matrices(scope)
        if filters is None and ids is not None:
            return score_ids(entries, vector, ids, k)
        allowed = None if filters is None else self._allowed_rowids(scope, filters, ids)
        return top_k_many(entries, np.asarray([vector]), k, allowed)[0]

    def _scope_matrices(self, scope: Scope) -> list[ScopeMatrix]:
        return [self.memory_vectors.get(s, v) for s, v in self._matching_scopes(scope)]

    def _allowed_rowids(
        self, scope: Scope, filters: Node | None, ids: Sequence[str] | None
    ) -> set[int]:
        allowed: set[int] = set()
        for chunk in iter_chunks(list(ids), CHUNK) if ids is not None else [None]:
            where, args = self._memory_where(scope, filters, chunk)
            allowed.update(
                r[0]
                for r in self.db.rows(
                    f"SELECT m.rowid FROM {self.c} m JOIN {self.c}_scopes s ON s.id = m.scope_id "
                    f"WHERE {where}",
                    args,
                )
            )
        return allowed


def _group_by_scope(memories: Sequence[NewMemory]) -> dict[Scope, list[NewMemory]]:
    groups: dict[Scope, list[NewMemory]] = defaultdict(list)
    for m in memories:
        groups[m.record.scope].append(m)
    return groups
