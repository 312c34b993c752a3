"""The SQLite hooks of ``Store.audit``: postings per memory and the BM25 bookkeeping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from linkmem.store.audit import AuditMixin, StoredPostings
from linkmem.store.base import iter_chunks
from linkmem.store.sqlite.connection import CHUNK, Connection, placeholders

if TYPE_CHECKING:  # write_follow reads the store
    from linkmem.store.sqlite.write_follow import WriteFollower


class AuditTables(AuditMixin):
    db: Connection
    c: str
    follower: WriteFollower

    def postings_of(self, ids: Sequence[str]) -> dict[str, StoredPostings]:
        found: dict[str, StoredPostings] = {}
        for chunk in iter_chunks(list(ids), CHUNK):
            marks = placeholders(len(chunk))
            for memory_id, doc_len, ctx_len in self.db.rows(
                f"SELECT id, doc_len, ctx_len FROM {self.c} WHERE id IN ({marks})", chunk
            ):
                found[memory_id] = StoredPostings(doc_len, ctx_len=ctx_len)
            for memory_id, term, tf, ctx in self.db.rows(
                f"SELECT m.id, p.term, p.tf, p.ctx FROM {self.c}_postings p JOIN {self.c} m "
                f"ON m.rowid = p.memory WHERE m.id IN ({marks})",
                chunk,
            ):
                found[memory_id].add(term, tf, ctx)
        return found

    def bookkeeping_problems(self) -> dict[str, list[str]]:
        stale = self.db.rows(
            f"SELECT s.user_id, s.agent_id, s.run_id FROM {self.c}_scopes s LEFT JOIN "
            f"(SELECT scope_id, count(*) AS n, sum(doc_len) AS total, sum(ctx_len) AS ctx "
            f"FROM {self.c} GROUP BY scope_id) m ON m.scope_id = s.id "
            "WHERE s.n_docs != coalesce(m.n, 0) OR s.total_len != coalesce(m.total, 0) "
            "OR s.ctx_total != coalesce(m.ctx, 0)"
        )
        stray = self.db.rows(
            f"SELECT DISTINCT p.memory FROM {self.c}_postings p LEFT JOIN {self.c} m "
            "ON m.rowid = p.memory WHERE m.rowid IS NULL OR m.scope_id != p.scope_id "
            "OR m.doc_len != p.doc_len OR m.ctx_len != p.ctx_len "
            "OR (p.tf <= 0 AND p.ctx <= 0) OR p.tf < 0 OR p.ctx < 0"
        )
        stale += self.db.rows(
            f"SELECT s.user_id, s.agent_id, s.run_id FROM {self.c}_scopes s WHERE s.id IN "
            f"(SELECT scope_id FROM ({_TERM_COUNTS.format(c=self.c)}) GROUP BY scope_id "
            "HAVING sum(counted != df) > 0)"
        )
        return {
            "stale_stats": sorted({f"{u}/{a}/{r}" for u, a, r in stale}),
            "stray_postings": [f"row {r[0]}" for r in stray],
        }

    def repair_bookkeeping(self) -> None:
        with self.db.transaction():
            self.db.run(
                f"DELETE FROM {self.c}_postings WHERE memory NOT IN (SELECT rowid FROM {self.c}) "
                f"OR scope_id != (SELECT scope_id FROM {self.c} m WHERE m.rowid = memory) "
                "OR (tf <= 0 AND ctx <= 0) OR tf < 0 OR ctx < 0"
            )
            context = f"(SELECT coalesce(sum(p.ctx), 0) FROM {self.c}_postings p "
            context += f"WHERE p.memory = {self.c}.rowid)"
            self.db.run(f"UPDATE {self.c} SET ctx_len = {context} WHERE ctx_len != {context}")
            self.db.run(
                f"UPDATE {self.c}_postings SET (doc_len, ctx_len) = (SELECT doc_len, ctx_len "
                f"FROM {self.c} m WHERE m.rowid = memory)"
            )
            self.db.run(f"DELETE FROM {self.c}_terms")
            self.db.run(
                f"INSERT INTO {self.c}_terms SELECT scope_id, term, count(*) "
                f"FROM {self.c}_postings GROUP BY scope_id, term"
            )
            self.follower.spoil()
            of_scope = f"FROM {self.c} m WHERE m.scope_id = {self.c}_scopes.id"
            self.db.run(
                f"UPDATE {self.c}_scopes SET n_docs = (SELECT count(*) {of_scope}), "
                f"total_len = (SELECT coalesce(sum(doc_len), 0) {of_scope}), "
                f"ctx_total = (SELECT coalesce(sum(ctx_len), 0) {of_scope}), "
                "mem_version = mem_version + 1"
            )


#: Each (scope, term) of the postings or of ``_terms`` with its postings counted and its
#: stored df (0 when absent on either side).
_TERM_COUNTS = (
    "SELECT scope_id, term, sum(n) AS counted, sum(df) AS df FROM ("
    "SELECT scope_id, term, count(*) AS n, 0 AS df FROM {c}_postings GROUP BY scope_id, term "
    "UNION ALL SELECT scope_id, term, 0, df FROM {c}_terms) GROUP BY scope_id, term"
)
