"""The PostgreSQL hooks of ``Store.audit``: postings per memory, the BM25 bookkeeping and the
kept link counts."""

from __future__ import annotations

from collections.abc import Sequence

from linkmem.store.audit import AuditMixin, StoredPostings
from linkmem.store.postgres import sql
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.sql import Tables
from linkmem.store.postgres.write_follow import WriteFollower


class AuditTables(AuditMixin):
    db: Database
    t: Tables
    follower: WriteFollower

    def postings_of(self, ids: Sequence[str]) -> dict[str, StoredPostings]:
        if not ids:
            return {}
        found = {
            memory_id: StoredPostings(doc_len, ctx_len=ctx_len)
            for memory_id, doc_len, ctx_len in self.db.rows(
                f"SELECT id, doc_len, ctx_len FROM {self.t.mem} WHERE id = ANY(%s::text[])",
                (list(ids),),
            )
        }
        for memory_id, term, tf, ctx in self.db.rows(
            f"SELECT memory, term, tf, ctx FROM {self.t.postings} WHERE memory = ANY(%s::text[])",
            (list(ids),),
        ):
            found[memory_id].add(term, tf, ctx)
        return found

    def bookkeeping_problems(self) -> dict[str, list[str]]:
        t = self.t
        stale = self.db.rows(
            f"SELECT s.user_id, s.agent_id, s.run_id FROM {t.scopes} s LEFT JOIN "
            f"(SELECT scope_id, count(*) AS n, sum(doc_len) AS total, sum(ctx_len) AS ctx "
            f"FROM {t.mem} GROUP BY scope_id) m ON m.scope_id = s.id "
            "WHERE s.n_docs != coalesce(m.n, 0) OR s.total_len != coalesce(m.total, 0) "
            "OR s.ctx_total != coalesce(m.ctx, 0)"
        )
        stray = self.db.rows(
            f"SELECT DISTINCT p.memory FROM {t.postings} p JOIN {t.mem} m ON m.id = p.memory "
            f"WHERE m.scope_id != p.scope_id OR {_EMPTY} OR {_STALE_LENGTHS}"
        )
        miscounted = self.db.rows(
            f"SELECT e.id FROM {t.entities} e LEFT JOIN {t.link_counts} c ON c.entity = e.id "
            f"LEFT JOIN ({_OWN_LINKS.format(links=t.links)}) o ON o.entity = e.id "
            "WHERE coalesce(c.n, 0) != coalesce(o.n, 0)"
        )
        return {
            "stale_stats": [f"{u}/{a}/{r}" for u, a, r in stale],
            "stray_postings": [r[0] for r in stray],
            "stale_link_counts": [r[0] for r in miscounted],
        }

    def repair_bookkeeping(self) -> None:
        t = self.t
        with self.db.transaction() as conn:
            # Scopes first, as every writer (``sql.lock_scopes``): the memories' triggers
            # update their rows (``m010_memory_versions``).
            self.follower.spoil()
            self.db.execute(conn, sql.lock_all_scopes(t))
            self.db.execute(
                conn,
                f"DELETE FROM {t.postings} p USING {t.mem} m "
                f"WHERE m.id = p.memory AND (m.scope_id != p.scope_id OR {_EMPTY})",
            )
            self.db.execute(
                conn,
                f"UPDATE {t.mem} m SET ctx_len = x.ctx FROM (SELECT m2.id, "
                f"coalesce(sum(p.ctx), 0) AS ctx FROM {t.mem} m2 LEFT JOIN {t.postings} p "
                "ON p.memory = m2.id GROUP BY m2.id) x WHERE x.id = m.id AND m.ctx_len != x.ctx",
            )
            self.db.execute(
                conn,
                f"UPDATE {t.postings} p SET doc_len = m.doc_len, ctx_len = m.ctx_len "
                f"FROM {t.mem} m WHERE m.id = p.memory AND {_STALE_LENGTHS}",
            )
            self.db.execute(
                conn,
                f"INSERT INTO {t.link_counts} AS c (entity, n) SELECT e.id, coalesce(o.n, 0) "
                f"FROM {t.entities} e LEFT JOIN ({_OWN_LINKS.format(links=t.links)}) o "
                "ON o.entity = e.id ORDER BY e.id "
                "ON CONFLICT (entity) DO UPDATE SET n = excluded.n WHERE c.n != excluded.n",
            )
            self.db.execute(
                conn,
                f"UPDATE {t.scopes} s SET n_docs = coalesce(m.n, 0), "
                "total_len = coalesce(m.total, 0), ctx_total = coalesce(m.ctx, 0) "
                "FROM (SELECT s2.id, count(x.id) AS n, sum(x.doc_len) AS total, "
                f"sum(x.ctx_len) AS ctx FROM {t.scopes} s2 LEFT JOIN {t.mem} x "
                "ON x.scope_id = s2.id GROUP BY s2.id) m WHERE m.id = s.id",
            )


#: A posting of no weight (neither own count nor context), or a negative one.
_EMPTY = "((p.tf <= 0 AND p.ctx <= 0) OR p.tf < 0 OR p.ctx < 0)"
#: A posting whose copy of its memory's lengths (``m006_posting_lengths``) differs.
_STALE_LENGTHS = "(p.doc_len != m.doc_len OR p.ctx_len != m.ctx_len)"
#: Each entity's own links, as the link-count triggers count them (m007).
_OWN_LINKS = "SELECT entity, count(*) AS n FROM {links} WHERE own GROUP BY entity"
