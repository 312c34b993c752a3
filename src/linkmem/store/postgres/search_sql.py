"""SQL for one search in few round trips (see ``search_reads``): one function per statement,
each returning the statement and its arguments.

Each statement returns the rows of the plain store statements it stands for (the same
expressions and ORDER BY), so the rows of a subset of its ids are exactly the plain answer's.
``Where`` is a condition with its arguments. Scope ids are given as a list, as in the plain
statements: with a subquery instead, the planner cannot tell a 100-memory scope from a big one
and walks the HNSW index through thousands of other scopes' rows (45 ms instead of 1 ms).
"""

from __future__ import annotations

from typing import Any

from linkmem.store.postgres.entity_sql import select_entities
from linkmem.store.postgres.sql import ID_ROWS, MEMORY_COLUMNS, Tables, json_ids

Where = tuple[str, list[Any]]
Statement = tuple[str, list[Any]]
#: Memory ids: a list, or a subquery with its arguments (``id_array``).
Ids = list[str] | tuple[str, list[Any]]


#: A search reads its scope exactly instead of through the HNSW index when the scope's
#: memories ``n`` (its ``n_docs``) and the table's ``N`` (planner statistics, ``reltuples``)
#: satisfy ``n * n <= EXACT_SCAN_RATIO * k * N``. A filtered HNSW scan visits about
#: ``k * N / n`` index entries to find ``k`` of the scope's (a random index and heap read each),
#: the exact scan reads the scope's ``n`` rows. Measured on 2 cores, 200k rows of 384-dim
#: vectors, scope rows spread over the table, k = 60, shared_buffers 128MB (ms per read,
#: HNSW / exact): 10k rows 33.8 / 11.3, 30k rows 14.4 / 107.8; the two meet at about
#: ``n * n = 1,000 * N``, i.e. 16 * k * N. At 1M rows the exact scan is taken below ~31k.
EXACT_SCAN_RATIO = 16.0


def scope_sizes(t: Tables, keys: list[str]) -> str:
    """``sql.select_scopes`` with each scope's number of memories (``n_docs``), versions
    (``mem_version``, ``dense_cache``; ``ent_version``, the entity and record caches;
    ``kw_version``, ``search_keyword_reads``; ``ev_version``, ``search_near_cache``) and
    total lengths (``total_len``, ``ctx_total``: BM25's statistics)."""
    where = " AND ".join(f"{k} = %s" for k in keys) or "TRUE"
    return (
        "SELECT id, n_docs, mem_version, ent_version, total_len, ctx_total, kw_version, "
        "ev_version "
        f"FROM {t.scopes} WHERE {where} ORDER BY id"
    )


def entities_by_key(t: Tables, keys: list[str]) -> str:
    """``entities_by_key``: kind and vector (``vector_send``) of the entities with one of the
    given keys (``= ANY``, the last argument) in the scopes whose ``keys`` columns match.
    Rows: key, kind, vector, oldest first."""
    where = " AND ".join(f"s.{k} = %s" for k in keys) or "TRUE"
    return (
        f"SELECT e.key, e.kind, vector_send(e.embedding) FROM {t.entities} e "
        f"JOIN {t.scopes} s ON s.id = e.scope_id WHERE {where} "
        "AND e.key = ANY(%s::text[]) ORDER BY e.seq"
    )


def exact_scan_gate(t: Tables, scope_ids: list[int] | None, k: int) -> Where:
    """A query of one boolean: whether the scopes ``scope_ids`` are small enough, against the
    whole table, for an exact scan (see ``EXACT_SCAN_RATIO``); false for every scope (None).
    A table never analysed (``reltuples`` -1) counts as the scopes' own size."""
    if scope_ids is None:
        return "SELECT FALSE", []
    return (
        "SELECT st.n <= %s OR st.n * st.n <= %s * %s * greatest(st.total, st.n) FROM "
        f"(SELECT (SELECT coalesce(sum(s.n_docs), 0)::float8 FROM {t.scopes} s "
        "WHERE s.id = ANY(%s::bigint[])) AS n, (SELECT c.reltuples::float8 FROM pg_class c "
        "WHERE c.oid = %s::regclass) AS total OFFSET 0) st",
        [k, EXACT_SCAN_RATIO, k, scope_ids, t.mem],
    )


def dense_first(t: Tables, where: Where, gate: Where, query: str, k: int) -> Statement:
    """``vector_ann`` and, when it finds fewer than ``k`` rows or ``gate`` (``exact_scan_gate``)
    is true, ``vector_exact`` instead (decided inside the statement). Rows: id, sim."""
    cond, args = where
    gate_sql, gate_args = gate
    return (
        f"WITH exact AS MATERIALIZED ({gate_sql}), "
        "hits AS MATERIALIZED (SELECT m.id, m.seq, m.embedding <=> %s::vector AS d "
        f"FROM {t.mem} m WHERE NOT (SELECT * FROM exact) AND {cond} "
        "ORDER BY m.embedding <=> %s::vector LIMIT %s), "
        "found AS MATERIALIZED (SELECT count(*) AS n FROM hits) "
        "SELECT id, sim FROM ("
        "SELECT 1 AS part, id, 1 - d AS sim, d AS key, seq FROM hits "
        "WHERE (SELECT n FROM found) >= %s "
        "UNION ALL (SELECT 2, m.id, 1 - (m.embedding <=> %s::vector) AS sim, "
        f"-(1 - (m.embedding <=> %s::vector)), m.seq FROM {t.mem} m "
        f"WHERE (SELECT n FROM found) < %s AND {cond} ORDER BY sim DESC, m.seq LIMIT %s)"
        ") r ORDER BY part, key, seq",
        [*gate_args, query, *args, query, k, k, query, query, k, *args, k],
    )


def nearest_entities_detailed(
    t: Tables,
    scope: Where,
    queries: list[str],
    k: int,
    min_sim: float,
    cap: int,
    links: int,
    seqs: bool = True,
) -> Statement:
    """``nearest_entities_exact`` (at most ``cap`` entities in the scopes) or
    ``nearest_entities_ann`` (more), chosen inside the statement, each row with its entity's
    record and, when it has at most ``links`` links, its memories (``_detailed``; without
    their seqs unless ``seqs``). Rows: ord, id, sim, ``DETAILED`` columns."""
    cond, args = scope
    sql = (
        "WITH q AS MATERIALIZED (SELECT vec::vector AS vec, ord FROM unnest(%b::text[]) "
        "WITH ORDINALITY AS u(vec, ord)), "
        "cnt AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM "
        f"{t.entities} x WHERE {cond} LIMIT %s) c), "
        "scored AS (SELECT q.ord, x.id, x.seq, 1 - (x.embedding <=> q.vec) AS sim "
        f"FROM {t.entities} x CROSS JOIN q WHERE (SELECT n FROM cnt) <= %s AND {cond}), "
        "ranked AS (SELECT *, row_number() OVER (PARTITION BY ord ORDER BY sim DESC, seq) AS r "
        "FROM scored WHERE sim >= %s), "
        "near AS MATERIALIZED (SELECT ord, id, sim, -sim AS key, seq FROM ranked WHERE r <= %s "
        "UNION ALL SELECT q.ord, n.id, 1 - n.d, n.d, n.seq FROM q CROSS JOIN LATERAL "
        f"(SELECT x.id, x.seq, x.embedding <=> q.vec AS d FROM {t.entities} x WHERE {cond} "
        "ORDER BY x.embedding <=> q.vec LIMIT %s) n "
        "WHERE (SELECT n FROM cnt) > %s AND 1 - n.d >= %s), "
        f"{_detailed(t, 'SELECT id FROM near', seqs=seqs)} "
        f"SELECT n.ord, n.id, n.sim, {DETAILED} FROM near n JOIN detailed d ON d.id = n.id "
        "ORDER BY n.ord, n.key, n.seq"
    )
    return sql, [queries, *args, cap + 1, cap, *args, min_sim, k, *args, k, cap, min_sim, links]


#: ``= ANY`` of ids (``ID_ROWS``, a JSON text) that the planner does not look into: with an
#: array's values it estimates each one's selectivity, 5.1 ms of planning for a 2,000-memory
#: pool (0.6 ms this way, the same plan and execution time; 40 searches of the 10k scope,
#: mean planning 2.2 -> 0.6 ms). Not for ids compared row by row (BM25's ``h.memory``):
#: only an array the planner sees is hashed (2.0 -> 20.5 ms); a join is (``sql.bm25_given``).
UNSEEN_IDS = f"ANY(ARRAY(SELECT {ID_ROWS}))"


def entities_of_ids(t: Tables, ids: Ids, links: int) -> Statement:
    """``entities_of_memories`` of ``ids`` restricted to the entities of at most ``links``
    links (what the second hop reads of its sources: ``rare_entities_of_memories``). One row
    per entity (in entity seq order, as the plain rows), with the memories of ``ids`` it
    links, its record and all its memories (``_detailed``). The links are grouped first and
    the records looked up by key (``= ANY(ARRAY(...))``: the planner expects few rows; with
    ``IN`` it expected ~10,000 entities and scanned the entity table). An entity with at most
    ``links`` links is one without a ``link_counts`` row of more (an anti-join: 40 searches,
    mean 9.1 -> 7.5 ms against a join to every link's count). Rows: memories of ``ids``,
    ``DETAILED`` columns."""
    ids_sql, ids_args = id_array(ids, seen=True)
    return (
        f"WITH l AS MATERIALIZED (SELECT k.memory, k.entity FROM {t.links} k "
        f"WHERE k.memory = ANY({ids_sql}) AND NOT EXISTS (SELECT 1 FROM {t.link_counts} c "
        "WHERE c.entity = k.entity AND c.n > %s)), "
        "g AS MATERIALIZED (SELECT entity, array_agg(memory) AS pool FROM l GROUP BY entity), "
        f"{_detailed(t, 'SELECT entity FROM g', by_key=True)} "
        f"SELECT g.pool, {DETAILED} FROM detailed d JOIN g ON g.entity = d.id "
        "ORDER BY d.entity_seq",
        [*ids_args, links, links],
    )


def hub_links(t: Tables, ids: list[str], hubs: list[str]) -> Statement:
    """``links_among`` of the ``hubs`` and the memories ``ids``: one row per hub linked to
    one of them, in entity seq order, with those memories in memory order (the order of
    the links' memory index, which the grouped scan of every pool link gave before). A
    search needs no record of these entities (the nearest entities' read has them).
    Rows: entity, memories."""
    return (
        f"SELECT k.entity, array_agg(k.memory ORDER BY k.memory) FROM {t.links} k "
        f"JOIN {t.entities} e ON e.id = k.entity WHERE k.memory = {UNSEEN_IDS} "
        "AND k.entity = ANY(%s::text[]) GROUP BY e.seq, k.entity ORDER BY e.seq",
        [json_ids(ids), hubs],
    )


def reached(t: Tables, sources: list[str], links: int) -> Ids:
    """The memories the second hop can reach from ``sources``: those with an own link to an
    entity of at most ``links`` links that a source links (a superset of the hop's targets,
    ``linkmem.entities.hop``), as a subquery for ``id_array``."""
    return (
        f"SELECT l2.memory FROM {t.links} l1 JOIN {t.links} l2 ON l2.entity = l1.entity "
        "AND l2.own WHERE l1.memory = ANY(%b::text[]) AND NOT EXISTS (SELECT 1 FROM "
        f"{t.link_counts} c WHERE c.entity = l1.entity AND c.n > %s)",
        [sources, links],
    )


def id_array(ids: Ids, seen: bool = False) -> tuple[str, list[Any]]:
    """A text array of memory ids: a list or a subquery (``reached``). A list is sent as JSON
    (``ID_ROWS``: the planner reads it as few ids, an index scan of their rows), or when
    ``seen`` in binary, values the planner sees (``entities_of_ids``: with unseen ids it
    hashed all of ``link_counts`` for its anti-join, 0.26 -> 0.73 ms in 100-memory scopes)."""
    if isinstance(ids, list):
        return ("%b::text[]", [ids]) if seen else (f"ARRAY(SELECT {ID_ROWS})", [json_ids(ids)])
    sub, args = ids
    return f"ARRAY({sub})", args


#: The columns of ``_detailed`` rows: ``select_entities``' columns, then seqs, ids and owns.
DETAILED = (
    "d.id, d.text, d.key, d.kind, d.user_id, d.agent_id, d.run_id, d.link_count, d.seqs, d.ids, "
    "d.owns"
)


def _detailed(t: Tables, ids_sql: str, by_key: bool = False, seqs: bool = True) -> str:
    """CTEs ``records`` (``select_entities`` once per entity of ``ids_sql``, with the
    entity's seq as ``entity_seq``) and ``detailed``: each record with, when it has at most
    ``%s`` links, the rows of ``memories_of_entities`` for it as three arrays in memory seq
    order (seqs, ids, and whether each link is own); NULLs for more links. ``by_key``: the
    ids as an array (``= ANY(ARRAY(...))``), which the planner reads as few. Without
    ``seqs``: NULL seqs, the ids and owns in the links' order, read from the links' index
    alone: ``SearchReads`` takes them from the pool's records (``_sequence_lists``)."""
    where = f"e.id = ANY(ARRAY({ids_sql}))" if by_key else f"e.id IN ({ids_sql})"
    records = select_entities(t, where, ", e.seq AS entity_seq")
    if seqs:
        lists = (
            "SELECT array_agg(m.seq ORDER BY m.seq) AS seqs, array_agg(m.id ORDER BY m.seq) "
            f"AS ids, array_agg(l2.own ORDER BY m.seq) AS owns FROM {t.links} l2 "
            f"JOIN {t.mem} m ON m.id = l2.memory"
        )
    else:
        lists = (
            "SELECT NULL::bigint[] AS seqs, array_agg(l2.memory) AS ids, "
            f"array_agg(l2.own) AS owns FROM {t.links} l2"
        )
    return (
        f"records AS MATERIALIZED ({records}), "
        "detailed AS (SELECT r.*, a.seqs, a.ids, a.owns FROM records r LEFT JOIN LATERAL "
        f"({lists} WHERE l2.entity = r.id AND r.link_count <= %s) a ON TRUE)"
    )


#: ``MEMORY_COLUMNS`` with the metadata as JSON text: a search reads the records of its whole
#: candidate pool (~300 in a 10k-memory scope) and returns ten, so only those are parsed.
RAW_MEMORY_COLUMNS = MEMORY_COLUMNS.replace("m.metadata", "m.metadata::text", 1)


def memories_of_ids(
    t: Tables, ids: Ids, where: Where, query: str | None, versions: bool = False
) -> Statement:
    """``select_memories_by_id`` (the metadata as text, ``RAW_MEMORY_COLUMNS``), then each
    row's seq and, when ``where`` keeps it, its ``vector_exact`` cosine (else NULL): records
    and cosines of the same rows in one read. ``versions``: then its scope's ``ent_version``,
    ``mem_version`` and id (``search_record_reads``)."""
    cond, args = where
    ids_sql, ids_args = id_array(ids)
    scope = ", s.ent_version, s.mem_version, s.id" if versions else ""
    return (
        f"SELECT {RAW_MEMORY_COLUMNS}, m.seq, CASE WHEN {cond} THEN "
        f"1 - (m.embedding <=> %s::vector) END{scope} FROM {t.mem} m "
        f"JOIN {t.scopes} s ON s.id = m.scope_id WHERE m.id = ANY({ids_sql})",
        [*args, query, *ids_args],
    )
