"""The PostgreSQL hooks of ``Store.audit``: postings per memory and the BM25 bookkeeping."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from linkmem.store.audit import AuditMixin
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables


class AuditTables(AuditMixin):
    db: Database
    t: Tables

    def postings_of(self, ids: Sequence[str]) -> dict[str, tuple[int, Counter[str]]]:
        if not ids:
            return {}
        found: dict[str, tuple[int, Counter[str]]] = {
            memory_id: (doc_len, Counter())
            for memory_id, doc_len in self.db.rows(
                f"SELECT id, doc_len FROM {self.t.mem} WHERE id = ANY(%s::text[])", (list(ids),)
            )
        }
        for memory_id, term, tf in self.db.rows(
            f"SELECT memory, term, tf FROM {self.t.postings} WHERE memory = ANY(%s::text[])",
            (list(ids),),
        ):
            found[memory_id][1][term] = tf
        return found

    def bookkeeping_problems(self) -> dict[str, list[str]]:
        t = self.t
        stale = self.db.rows(
            f"SELECT s.user_id, s.agent_id, s.run_id FROM {t.scopes} s LEFT JOIN "
            f"(SELECT scope_id, count(*) AS n, sum(doc_len) AS total FROM {t.mem} "
            "GROUP BY scope_id) m ON m.scope_id = s.id "
            "WHERE s.n_docs != coalesce(m.n, 0) OR s.total_len != coalesce(m.total, 0)"
        )
        stray = self.db.rows(
            f"SELECT DISTINCT p.memory FROM {t.postings} p JOIN {t.mem} m ON m.id = p.memory "
            "WHERE m.scope_id != p.scope_id"
        )
        return {
            "stale_stats": [f"{u}/{a}/{r}" for u, a, r in stale],
            "stray_postings": [r[0] for r in stray],
        }

    def repair_bookkeeping(self) -> None:
        t = self.t
        with self.db.transaction() as conn:
            self.db.execute(
                conn,
                f"DELETE FROM {t.postings} p USING {t.mem} m "
                "WHERE m.id = p.memory AND m.scope_id != p.scope_id",
            )
            self.db.execute(
                conn,
                f"UPDATE {t.scopes} s SET n_docs = coalesce(m.n, 0), "
                "total_len = coalesce(m.total, 0) FROM (SELECT s2.id, count(x.id) AS n, "
                f"sum(x.doc_len) AS total FROM {t.scopes} s2 LEFT JOIN {t.mem} x "
                "ON x.scope_id = s2.id GROUP BY s2.id) m WHERE m.id = s.id",
            )
