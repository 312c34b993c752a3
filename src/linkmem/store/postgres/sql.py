"""SQL for PostgreSQL: table names, one function per statement, metadata-filter compilation.

Statements use ``%s`` placeholders (psycopg); table names come from ``Tables`` (quoted
identifiers of one collection), never from user input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from linkmem.filters import Cond, Node, compile_filter
from linkmem.rank.neighbour_terms import CONTEXT_SCALE


@dataclass(frozen=True)
class Tables:
    """Quoted table names of collection ``c`` (index names are ``c`` plus a short suffix)."""

    c: str

    def _q(self, suffix: str) -> str:
        return f'"{self.c}{suffix}"'

    @property
    def mem(self) -> str:
        return self._q("")

    @property
    def scopes(self) -> str:
        return self._q("_scopes")

    @property
    def postings(self) -> str:
        return self._q("_postings")

    @property
    def entities(self) -> str:
        return self._q("_entities")

    @property
    def links(self) -> str:
        return self._q("_links")

    @property
    def link_counts(self) -> str:
        """Each entity's number of links, kept by triggers on ``links`` (m003)."""
        return self._q("_link_counts")

    @property
    def history(self) -> str:
        return self._q("_history")

    @property
    def add_log(self) -> str:
        """Transactions of adds alone, for other processes' caches (m017, ``add_log``)."""
        return self._q("_add_log")

    def index(self, suffix: str) -> str:
        return self._q(suffix)


@lru_cache(maxsize=16)
def _vector_format(dim: int) -> str:
    return "[" + ",".join(["%.9g"] * dim) + "]"


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form ``[x,y,...]``; 9 significant digits round-trip a float32."""
    values = np.asarray(vector, dtype=np.float32).ravel().tolist()
    return _vector_format(len(values)) % tuple(values)


def in_scopes(column: str, scope_ids: list[int] | None) -> tuple[str, list[Any]]:
    """``column`` is one of ``scope_ids`` (None: every scope)."""
    if scope_ids is None:
        return "TRUE", []
    return f"{column} = ANY(%s::bigint[])", [scope_ids]


# scopes ---------------------------------------------------------------------------------------
def insert_scope(t: Tables) -> str:
    return (
        f"INSERT INTO {t.scopes} (user_id, agent_id, run_id) VALUES (%s, %s, %s) "
        "ON CONFLICT (user_id, agent_id, run_id) DO NOTHING"
    )


def select_exact_scope(t: Tables) -> str:
    return f"SELECT id FROM {t.scopes} WHERE user_id = %s AND agent_id = %s AND run_id = %s"


def select_scopes(t: Tables, keys: Sequence[str]) -> str:
    """Scope ids whose ``keys`` columns equal the given values (subset match)."""
    where = " AND ".join(f"{k} = %s" for k in keys) or "TRUE"
    return f"SELECT id FROM {t.scopes} WHERE {where} ORDER BY id"


def lock_scopes(t: Tables) -> str:
    """Lock scope rows in id order. Every write transaction locks the scopes it writes in
    first, so writers of one scope queue there instead of deadlocking on memories, links and
    entities, and writers of several scopes take them in one global order."""
    return f"SELECT id FROM {t.scopes} WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE"


def lock_scopes_of(t: Tables, table: str) -> str:
    """``lock_scopes`` for the scopes of the given rows of ``table`` (memories or entities)."""
    return (
        f"SELECT s.id FROM {t.scopes} s WHERE s.id IN (SELECT x.scope_id FROM {table} x "
        "WHERE x.id = ANY(%s::text[])) ORDER BY s.id FOR NO KEY UPDATE"
    )


def lock_all_scopes(t: Tables) -> str:
    return f"SELECT id FROM {t.scopes} ORDER BY id FOR NO KEY UPDATE"


def add_scope_stats(t: Tables) -> str:
    """Adjust document count and total length of one scope (row-locks it until commit); the
    scope's ``kw_version`` and ``mem_version`` after it."""
    return (
        f"UPDATE {t.scopes} SET n_docs = n_docs + %s, total_len = total_len + %s, "
        "ctx_total = ctx_total + %s WHERE id = %s RETURNING kw_version, mem_version"
    )


def reset_scope_stats(t: Tables) -> str:
    return f"UPDATE {t.scopes} SET n_docs = 0, total_len = 0, ctx_total = 0"


# memories -------------------------------------------------------------------------------------
MEMORY_COLUMNS = (
    "m.id, m.text, m.metadata, m.created_at, m.updated_at, m.role, m.actor_id, "
    "s.user_id, s.agent_id, s.run_id"
)


def insert_memories(t: Tables) -> str:
    return (
        f"INSERT INTO {t.mem} (id, scope_id, text, metadata, role, actor_id, created_at, "
        "updated_at, doc_len, ctx_len, embedding) "
        "SELECT i, %s::bigint, x, md::jsonb, r, a, ca, ua, dl, cl, e::vector "
        "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
        "%s::text[], %s::int[], %s::bigint[], %s::text[]) "
        "AS u(i, x, md, r, a, ca, ua, dl, cl, e) RETURNING id, seq"
    )


def insert_postings(t: Tables) -> str:
    """Postings of one scope, each with its memory's lengths (``m006_posting_lengths``)."""
    return (
        f"INSERT INTO {t.postings} (scope_id, term, memory, tf, ctx, doc_len, ctx_len) "
        "SELECT %s::bigint, term, memory, tf, ctx, dl, cl FROM unnest(%s::text[], %s::text[], "
        "%s::int[], %s::int[], %s::int[], %s::bigint[]) AS u(term, memory, tf, ctx, dl, cl)"
    )


def lock_memory(t: Tables) -> str:
    return f"SELECT scope_id, doc_len, ctx_len FROM {t.mem} WHERE id = %s FOR UPDATE"


def update_memory_fields(t: Tables) -> str:
    return f"UPDATE {t.mem} SET text = %s, metadata = %s::jsonb, updated_at = %s WHERE id = %s"


def update_memory_vector(t: Tables) -> str:
    return f"UPDATE {t.mem} SET embedding = %s::vector WHERE id = %s"


def update_doc_len(t: Tables) -> str:
    return f"UPDATE {t.mem} SET doc_len = %s, ctx_len = %s WHERE id = %s"


def delete_postings_of(t: Tables) -> str:
    """Delete a memory's postings, returning its context terms (``term, ctx``)."""
    return f"DELETE FROM {t.postings} WHERE memory = %s RETURNING term, ctx"


def delete_memories(t: Tables) -> str:
    """Delete memories (postings and links cascade) and take them out of their scope stats."""
    return (
        f"WITH gone AS (DELETE FROM {t.mem} WHERE id = ANY(%s::text[]) "
        "RETURNING scope_id, doc_len, ctx_len), per_scope AS (SELECT scope_id, count(*) AS n, "
        "sum(doc_len) AS len, sum(ctx_len) AS ctx FROM gone GROUP BY scope_id) "
        f"UPDATE {t.scopes} s SET n_docs = s.n_docs - p.n, total_len = s.total_len - p.len, "
        "ctx_total = s.ctx_total - p.ctx FROM per_scope p WHERE s.id = p.scope_id"
    )


def select_memories_by_id(t: Tables) -> str:
    return (
        f"SELECT {MEMORY_COLUMNS} FROM {t.mem} m JOIN {t.scopes} s ON s.id = m.scope_id "
        "WHERE m.id = ANY(%s::text[])"
    )


def lock_memories_by_id(t: Tables) -> str:
    """The rows of ``select_memories_by_id``, locked in id order (no lock-order deadlock)."""
    return (
        f"SELECT {MEMORY_COLUMNS} FROM {t.mem} m JOIN {t.scopes} s ON s.id = m.scope_id "
        "WHERE m.id = ANY(%s::text[]) ORDER BY m.id FOR UPDATE OF m"
    )


def list_memories(t: Tables, where: str) -> str:
    return (
        f"SELECT {MEMORY_COLUMNS} FROM {t.mem} m JOIN {t.scopes} s ON s.id = m.scope_id "
        f"WHERE {where} ORDER BY m.created_at DESC, m.seq DESC LIMIT %s OFFSET %s"
    )


def memory_ids(t: Tables, where: str) -> str:
    return f"SELECT m.id FROM {t.mem} m WHERE {where} ORDER BY m.seq"


def count_memories(t: Tables, where: str) -> str:
    return f"SELECT count(*) FROM {t.mem} m WHERE {where}"


def existing_ids(table: str) -> str:
    return f"SELECT id FROM {table} WHERE id = ANY(%s::text[])"


# retrieval ------------------------------------------------------------------------------------
#: Rows of the memory ids of one JSON text argument (``json_ids``). A search sends its pool's
#: ids (up to ~2,500) in up to three statements: psycopg dumps a list as a binary array in
#: Python, element by element (0.41 ms per 1,859 ids, 1.76 ms of the client's CPU per search
#: at 10k under cProfile), ``json.dumps`` in C (0.25 ms with psycopg's part), and the server
#: reads the JSON faster than the array (a round trip of both, ids counted: 1.05 -> 0.44 ms).
ID_ROWS = "json_array_elements_text(%s::json)"


def json_ids(ids: Sequence[str]) -> str:
    """The argument of ``ID_ROWS``: any storable id, exactly (JSON escapes the rest). A
    search sends its pool's ids in up to three statements: dumped once (``_json_of``)."""
    return _json_of(tuple(ids))


@lru_cache(maxsize=8)
def _json_of(ids: tuple[str, ...]) -> str:
    return json.dumps(ids)


def ann_settings() -> str:
    """Iterative HNSW scans keep going until LIMIT rows pass the filter (pgvector >= 0.8)."""
    return (
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
        "set_config('hnsw.ef_search', %s, true)"
    )


def vector_ann(t: Tables, where: str) -> str:
    """Top-k through the HNSW index; relaxed order is put right in the outer query."""
    return (
        f"WITH hits AS MATERIALIZED (SELECT m.id, m.seq, m.embedding <=> %s::vector AS d "
        f"FROM {t.mem} m WHERE {where} ORDER BY m.embedding <=> %s::vector LIMIT %s) "
        "SELECT id, 1 - d FROM hits ORDER BY d, seq"
    )


def vector_exact(t: Tables, where: str) -> str:
    """Exact cosine of every row passing ``where`` (the ordering cannot use the index)."""
    return (
        f"SELECT m.id, 1 - (m.embedding <=> %s::vector) AS sim FROM {t.mem} m "
        f"WHERE {where} ORDER BY sim DESC, m.seq LIMIT %s"
    )


def bm25(
    t: Tables,
    scopes_s: str,
    scopes_p: str,
    filters: str,
    ids: bool,
    k1: float,
    b: float,
    stats: bool = False,
) -> str:
    """BM25 (the formulas of ``linkmem.rank.bm25``, in float8) with N, average length and
    document frequencies over the searched scopes only. The postings of the query terms are
    read once, with their memory's lengths (``m006_posting_lengths``): no memory row is read
    unless ``filters`` (a condition on the memory ``m``) is not ``TRUE``. ``ids``: only the
    memories of a ``%b`` text array (after the terms' argument) are scored, each memory's
    terms summed in term order (``_bm25_top``, as ``bm25_given`` does). The CTEs are
    MATERIALIZED (inlined, the planner re-runs them per row). The idfs are one row of two
    arrays (terms in order, their idfs), read per posting with ``array_position``, not a
    table joined to the postings (the planner hashed the postings, 2,600-9,000 rows, to probe
    3-5 terms: 1.72 -> 1.51 ms of execution per search at 10k). A term's count is its own plus
    its context weight, a length likewise (``neighbour_terms``). Arguments: scopes (s), scopes
    (p), terms, ids when ``ids``, the filters', k. ``stats``: rows of three more columns
    (NULL), then one row of the statistics (``bm25_given``'s arguments): NULL memory and
    score, the terms found with their idf, N and the total length."""
    unit = f"{1 / CONTEXT_SCALE!r}::float8"
    ctes = (
        "WITH st AS MATERIALIZED (SELECT sum(s.n_docs)::float8 AS n, "
        f"sum(s.total_len + s.ctx_total * {unit})::float8 AS total FROM {t.scopes} s "
        f"WHERE {scopes_s}), "
        f"{_bm25_hits(t, f'{scopes_p} AND p.term = ANY(%s::text[])')}, "
        "idf AS MATERIALIZED (SELECT array_agg(d.term ORDER BY d.term) AS terms, "
        "array_agg(ln(1 + (st.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) ORDER BY d.term) "
        "AS idfs FROM (SELECT h.term, count(*) AS df FROM hits h GROUP BY h.term) d, st) "
    )
    top = _bm25_top(t, filters, "h.memory = ANY(%b::text[])" if ids else "TRUE", k1, b, ids)
    if not stats:
        return ctes + top
    return (
        f"{ctes}SELECT memory, score, terms, idfs, n, total FROM ((SELECT 1 AS part, r.*, "
        f"NULL::text[] AS terms, NULL::float8[] AS idfs, NULL::float8 AS n, "
        f"NULL::float8 AS total FROM ({top}) r) UNION ALL SELECT 2, NULL, NULL, i.terms, "
        "i.idfs, st.n, st.total FROM idf i CROSS JOIN st) a ORDER BY part, score DESC, memory"
    )


def bm25_given(
    t: Tables, scopes_p: str, filters: str, k1: float, b: float, ids: str | None = None
) -> str:
    """``bm25`` of some memories with the statistics given (a ``stats`` row of ``bm25`` of
    the same scopes and terms): only their postings are read, and the scores are the same to
    the last digit (the same float8 expressions of the same values, summed in the same
    order). Arguments: N, total length, the terms, their idfs, scopes (p), the terms again,
    the memories (``json_ids`` of a list of unique ids; or the arguments of ``ids``, an
    ``ARRAY(subquery)``), the filters', k."""
    scan = f"{scopes_p} AND p.term = ANY(%s::text[])"
    if ids is not None:  # a few memories: their postings by the memory index
        hits = _bm25_hits(t, f"{scan} AND p.memory = ANY({ids})", materialized=False)
    else:
        hits = _bm25_hits(t, scan, ID_ROWS, materialized=False)
    # Not materialized: each is read once, and the planner flattens the statement into one
    # query (planning 0.24 -> 0.17 ms per statement, 40 searches of the 10k scope).
    ctes = (
        "WITH st AS (SELECT %s::float8 AS n, %s::float8 AS total), "
        "idf AS (SELECT %s::text[] AS terms, %s::float8[] AS idfs), "
        f"{hits} "
    )
    return ctes + _bm25_top(t, filters, "TRUE", k1, b, True)


def _bm25_hits(t: Tables, where: str, keep: str = "", materialized: bool = True) -> str:
    """The CTE ``hits``: the postings of ``where`` (then those of the memories of ``keep``,
    rows of ids joined to the key's scan), with counts and lengths weighed
    (``neighbour_terms``). ``OFFSET 0`` keeps ``keep`` (``bm25_given``'s memories) out of the
    scan: given to it, the planner took a bitmap scan of the postings' memory index, one
    index search per id (486 for a pool of 500: 15 ms instead of 1.6 for the terms' 2,715
    postings read by the key and hashed against the ids). A join, not ``= ANY``: the planner
    estimates an ``= ANY`` array's selectivity element by element against the column's
    statistics (0.1 ms of planning per 1,000 ids)."""
    unit = f"{1 / CONTEXT_SCALE!r}::float8"
    scan = (
        f"SELECT p.term, p.memory, p.tf + p.ctx * {unit} AS tf, "
        f"p.doc_len + p.ctx_len * {unit} AS len FROM {t.postings} p WHERE {where}"
    )
    if keep:
        scan = f"SELECT p.* FROM ({scan} OFFSET 0) p JOIN {keep} AS u(id) ON u.id = p.memory"
    return f"hits AS {'MATERIALIZED ' if materialized else ''}({scan})"


def _bm25_top(
    t: Tables, filters: str, where: str, k1: float, b: float, by_term: bool = False
) -> str:
    """The top ``%s`` of the scores over the CTEs ``st``, ``hits`` and ``idf``. ``by_term``:
    each memory's terms summed in term order whatever the plan (float8 sums depend on the
    order: a sort-based GroupAggregate sums in the sort's order, a HashAggregate in the
    postings key's, which is term order for a memory); the top ``k`` sums in its plan's."""
    k1_sql, b_sql = f"{float(k1)!r}::float8", f"{float(b)!r}::float8"
    norm = (
        f"CASE WHEN st.total > 0 THEN {k1_sql} * (1 - {b_sql} + {b_sql} * "
        f"h.len / (st.total / st.n)) ELSE {k1_sql} END"
    )
    order = " ORDER BY h.term" if by_term else ""
    if filters != "TRUE":
        where += f" AND EXISTS (SELECT 1 FROM {t.mem} m WHERE m.id = h.memory AND {filters})"
    return (
        f"SELECT h.memory, sum(i.idfs[array_position(i.terms, h.term)] * h.tf * ({k1_sql} + 1) "
        f"/ (h.tf + {norm}){order}) AS score FROM hits h CROSS JOIN idf i CROSS JOIN st "
        f"WHERE {where} "
        "GROUP BY h.memory ORDER BY score DESC, h.memory LIMIT %s"
    )


# metadata filters -----------------------------------------------------------------------------
def filter_sql(node: Node | None, column: str = "m.metadata") -> tuple[str, list[Any]]:
    """Compile a parsed filter to a boolean over a JSONB column with ``filters.matches``
    semantics; every condition is ``coalesce``d, so a missing key is false, never NULL."""
    return compile_filter(node, lambda cond: _leaf_sql(cond, column), "TRUE")


def _leaf_sql(cond: Cond, column: str) -> tuple[str, list[Any]]:
    sql, args = _cond_sql(cond, column)
    return f"coalesce({sql}, false)", args


_RANGE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _cond_sql(cond: Cond, column: str) -> tuple[str, list[Any]]:
    key, op, want = cond.key, cond.op, cond.value
    value = f"({column} -> %s::text)"
    if op in ("eq", "ne"):
        sql = f"{value} = %s::jsonb"
        return (sql if op == "eq" else f"NOT coalesce({sql}, false)"), [key, json.dumps(want)]
    if op in ("in", "nin"):
        sql = f"{value} = ANY(%s::jsonb[])"
        wants = [json.dumps(w) for w in want]
        return (sql if op == "in" else f"NOT coalesce({sql}, false)"), [key, wants]
    if op in _RANGE:
        return _range_sql(key, column, _RANGE[op], want)
    return _contains_sql(key, column, want, op == "icontains")


def _range_sql(key: str, column: str, operator: str, want: Any) -> tuple[str, list[Any]]:
    """Numbers compare with numbers, strings (ISO dates) with strings in code-point order."""
    value = f"({column} -> %s::text)"
    if isinstance(want, str):
        text = f"({column} ->> %s::text)"
        return (
            f"(jsonb_typeof({value}) = 'string' AND {text} COLLATE \"C\" {operator} %s::text)",
            [key, key, want],
        )
    return (
        f"(jsonb_typeof({value}) = 'number' AND {value} {operator} %s::jsonb)",
        [key, key, json.dumps(want)],
    )


def _contains_sql(key: str, column: str, want: Any, fold: bool) -> tuple[str, list[Any]]:
    """Array membership (exact JSON equality) or substring of a string (``icontains``: both
    sides lower-cased in the database's default collation)."""
    value = f"({column} -> %s::text)"
    text = f"({column} ->> %s::text)"
    if fold:
        substring = f"strpos(lower({text}), lower(%s::text)) > 0"
    else:
        substring = f"strpos({text}, %s::text) > 0"
    sql = (
        f"CASE jsonb_typeof({value}) WHEN 'array' THEN EXISTS (SELECT 1 FROM "
        f"jsonb_array_elements({value}) AS j(v) WHERE j.v = %s::jsonb) "
        f"WHEN 'string' THEN {substring} ELSE false END"
    )
    return sql, [key, key, json.dumps(want), key, str(want)]
