"""SQL for the entity collection and its links: one function per statement."""

from __future__ import annotations

from linkmem.store.postgres.sql import Tables

ORDERS = {
    "links": "link_count DESC, e.key, e.seq",
    "text": "e.key, e.seq",
    "recent": "e.created_at DESC, e.seq DESC",
}


def select_entities(t: Tables, where: str, extra: str = "") -> str:
    """Entity records (``_entity_from_row``'s columns, then ``extra`` ones, e.g. ", e.seq")."""
    return (
        "SELECT e.id, e.text, e.key, e.kind, s.user_id, s.agent_id, s.run_id, "
        f"coalesce(c.n, 0) AS link_count{extra} "
        f"FROM {t.entities} e JOIN {t.scopes} s ON s.id = e.scope_id "
        f"LEFT JOIN {t.link_counts} c ON c.entity = e.id WHERE {where}"
    )


def list_entities(t: Tables, where: str, order: str) -> str:
    return f"{select_entities(t, where)} ORDER BY {ORDERS[order]} LIMIT %s OFFSET %s"


def find_entities(t: Tables) -> str:
    return f"SELECT key, id FROM {t.entities} WHERE scope_id = %s AND key = ANY(%s::text[])"


def count_entities_capped(t: Tables, scope_sql: str) -> str:
    """How many entities the scopes hold, counting no further than the cap (bounded cost)."""
    return f"SELECT count(*) FROM (SELECT 1 FROM {t.entities} x WHERE {scope_sql} LIMIT %s) c"


def nearest_entities_exact(t: Tables, scope_sql: str) -> str:
    """Per query vector (text[] of pgvector literals), exact cosine against every entity of
    the scopes in one pass: the ``k`` best at least ``min_similarity`` similar."""
    return (
        "WITH q AS MATERIALIZED (SELECT vec::vector AS vec, ord FROM unnest(%s::text[]) "
        "WITH ORDINALITY AS u(vec, ord)), "
        "scored AS (SELECT q.ord, x.id, x.seq, 1 - (x.embedding <=> q.vec) AS sim "
        f"FROM {t.entities} x CROSS JOIN q WHERE {scope_sql}), "
        "ranked AS (SELECT *, row_number() OVER (PARTITION BY ord ORDER BY sim DESC, seq) AS r "
        "FROM scored WHERE sim >= %s) "
        "SELECT ord, id, sim FROM ranked WHERE r <= %s ORDER BY ord, sim DESC, seq"
    )


def nearest_entities_ann(t: Tables, scope_sql: str) -> str:
    """Per query vector (text[] of pgvector literals), the ``k`` nearest entities through the
    HNSW index, then those at least ``min_similarity`` similar, best first."""
    return (
        "WITH q AS MATERIALIZED (SELECT vec::vector AS vec, ord FROM unnest(%s::text[]) "
        "WITH ORDINALITY AS u(vec, ord)) SELECT q.ord, n.id, 1 - n.d FROM q CROSS JOIN LATERAL "
        f"(SELECT x.id, x.seq, x.embedding <=> q.vec AS d FROM {t.entities} x WHERE {scope_sql} "
        "ORDER BY x.embedding <=> q.vec LIMIT %s) n WHERE 1 - n.d >= %s "
        "ORDER BY q.ord, n.d, n.seq"
    )


def insert_entities(t: Tables) -> str:
    """Insert one scope's entities; a key (or id) that exists keeps its row. The ids and
    seqs of those inserted."""
    return (
        f"INSERT INTO {t.entities} (id, scope_id, key, text, kind, created_at, embedding) "
        "SELECT i, %s::bigint, k, x, kd, %s::text, e::vector FROM unnest(%s::text[], "
        "%s::text[], %s::text[], %s::text[], %s::text[]) AS u(i, k, x, kd, e) "
        "ON CONFLICT DO NOTHING RETURNING id, seq"
    )


def entity_vectors_version(t: Tables) -> str:
    """The scope ``%s``'s ``ev_version`` (as the writing transaction sees it)."""
    return f"SELECT ev_version FROM {t.scopes} WHERE id = %s"


#: An own link written over an inherited one turns it own; an inherited one never
#: overrides (``m007_link_origin``).
_OWN_WINS = "ON CONFLICT (entity, memory) DO UPDATE SET own = TRUE WHERE excluded.own AND NOT l.own"


def insert_links(t: Tables) -> str:
    """Links of one origin (own: true, inherited: false)."""
    return (
        f"INSERT INTO {t.links} AS l (entity, memory, own) SELECT e, m, %s FROM "
        f"unnest(%s::text[], %s::text[]) AS u(e, m) {_OWN_WINS}"
    )


def delete_links_of_memories(t: Tables) -> str:
    return f"DELETE FROM {t.links} WHERE memory = ANY(%s::text[]) RETURNING entity"


def lock_entities(t: Tables) -> str:
    return f"SELECT id FROM {t.entities} WHERE id = ANY(%s::text[]) ORDER BY id FOR UPDATE"


def delete_orphans(t: Tables) -> str:
    """Delete those entities no memory names (no own link); their inherited links cascade."""
    return (
        f"DELETE FROM {t.entities} e WHERE e.id = ANY(%s::text[]) AND NOT EXISTS "
        f"(SELECT 1 FROM {t.links} l WHERE l.entity = e.id AND l.own)"
    )


def memories_of_entities(t: Tables, own_only: bool = False) -> str:
    own = " AND l.own" if own_only else ""
    return (
        f"SELECT l.entity, m.id FROM {t.links} l JOIN {t.mem} m ON m.id = l.memory "
        f"WHERE l.entity = ANY(%b::text[]){own} ORDER BY m.seq"
    )


def entities_of_memories(t: Tables) -> str:
    return (
        f"SELECT l.memory, e.id FROM {t.links} l JOIN {t.entities} e ON e.id = l.entity "
        "WHERE l.memory = ANY(%b::text[]) ORDER BY e.seq"
    )


def cooccurring(t: Tables) -> str:
    """Entities sharing memories with one entity, with the number of shared memories (own
    links, as link counts)."""
    return (
        f"SELECT o.id, count(*) AS shared FROM {t.links} a "
        f"JOIN {t.links} b ON b.memory = a.memory AND b.entity <> a.entity AND b.own "
        f"JOIN {t.entities} o ON o.id = b.entity WHERE a.entity = %s AND a.own "
        "GROUP BY o.id, o.key ORDER BY shared DESC, o.key LIMIT %s"
    )


def move_links(t: Tables) -> str:
    return (
        f"INSERT INTO {t.links} AS l (entity, memory, own) SELECT %s, memory, own "
        f"FROM {t.links} WHERE entity = %s {_OWN_WINS}"
    )


def delete_entity(t: Tables) -> str:
    """Delete one entity; its links cascade."""
    return f"DELETE FROM {t.entities} WHERE id = %s"


def rename_entity(t: Tables) -> str:
    return f"UPDATE {t.entities} SET text = %s, key = %s, embedding = %s::vector WHERE id = %s"
