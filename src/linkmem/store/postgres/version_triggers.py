"""The scopes' version columns, each moved on by statement-level triggers in the writing
transaction (so every writer keeps them: older processes, cascades, ``repair``); a process
caching a scope's rows knows from a column whether its copy is current. The triggers update
scope rows the write locked first (``sql.lock_scopes``), so they add no lock order."""

from __future__ import annotations

from linkmem.store.postgres.sql import Tables


def m010_memory_versions(t: Tables, dim: int) -> list[str]:
    """Each scope's ``mem_version``, moved on by every write that adds, deletes or changes
    (text, vector, lengths or scope) one of its memories, in that write's transaction: a
    process caching a scope's vectors (``dense_cache``) knows from one column whether its
    copy is current, also after another process's write. Kept by statement-level triggers on
    the memories (as the link counts of m003), so every writer keeps it, older processes
    and ``repair`` included; a write of metadata alone leaves it. The triggers update scope
    rows that the write locked first (``sql.lock_scopes``), so they add no lock order."""
    scopes = t.scopes
    bump, changed = t.index("_mem_version_bump"), t.index("_mem_version_update")
    return [
        f"ALTER TABLE {scopes} ADD COLUMN IF NOT EXISTS mem_version bigint NOT NULL DEFAULT 0",
        f"""CREATE FUNCTION {bump}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            UPDATE {scopes} s SET mem_version = s.mem_version + 1
            WHERE s.id IN (SELECT scope_id FROM touched);
            RETURN NULL;
        END $body$""",
        f"""CREATE FUNCTION {changed}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            UPDATE {scopes} s SET mem_version = s.mem_version + 1 WHERE s.id IN (
                SELECT unnest(ARRAY[o.scope_id, n.scope_id]) FROM previous o
                JOIN changed n ON n.id = o.id
                WHERE (o.text, o.embedding, o.doc_len, o.ctx_len, o.scope_id)
                    IS DISTINCT FROM (n.text, n.embedding, n.doc_len, n.ctx_len, n.scope_id));
            RETURN NULL;
        END $body$""",
        f"CREATE TRIGGER {t.index('_mem_version_add')} AFTER INSERT ON {t.mem} "
        f"REFERENCING NEW TABLE AS touched FOR EACH STATEMENT EXECUTE FUNCTION {bump}()",
        f"CREATE TRIGGER {t.index('_mem_version_sub')} AFTER DELETE ON {t.mem} "
        f"REFERENCING OLD TABLE AS touched FOR EACH STATEMENT EXECUTE FUNCTION {bump}()",
        f"CREATE TRIGGER {changed} AFTER UPDATE ON {t.mem} REFERENCING OLD TABLE AS previous "
        f"NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {changed}()",
    ]


def m011_search_versions(t: Tables, dim: int) -> list[str]:
    """Each scope's ``ent_version``, moved on by every write that changes what a search reads
    of the scope besides its memories' vectors and texts (``mem_version``): its postings, its
    entities, their links, and any column of its memories (metadata alone too). The search
    caches (``postgres.search_caches``) hold postings, entities and records at the scope's
    ``(ent_version, mem_version)``. Statement-level triggers, as m010's: in the writer's own
    transaction, every writer (older processes, cascades, ``repair``) keeps it; they update
    scope rows the write locked first (``sql.lock_scopes``), so they add no lock order. A
    link's scope is its entity's, else (the entity deleted in the same statement's cascade)
    its memory's."""
    scopes, bump = t.scopes, t.index("_ent_version_bump")
    links, changed = t.index("_ent_version_links"), t.index("_ent_version_memories")
    statements = [
        f"ALTER TABLE {scopes} ADD COLUMN IF NOT EXISTS ent_version bigint NOT NULL DEFAULT 0",
        _version_function(bump, scopes, "SELECT scope_id FROM touched"),
        _version_function(
            links,
            scopes,
            f"SELECT e.scope_id FROM touched x JOIN {t.entities} e ON e.id = x.entity "
            f"UNION SELECT m.scope_id FROM touched x JOIN {t.mem} m ON m.id = x.memory",
        ),
        _version_function(
            changed, scopes, "SELECT scope_id FROM touched UNION SELECT scope_id FROM previous"
        ),
        f"CREATE TRIGGER {t.index('_ent_version_memory')} AFTER UPDATE ON {t.mem} "
        "REFERENCING OLD TABLE AS previous NEW TABLE AS touched "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {changed}()",
    ]
    for table, name, function in (
        (t.postings, "_ent_version_postings", bump),
        (t.entities, "_ent_version_entities", bump),
        (t.links, "_ent_version_link", links),
    ):
        statements += _on_every_write(t, table, name, function)
    return statements


def _version_function(name: str, scopes: str, scope_ids: str, column: str = "ent_version") -> str:
    """A trigger function moving ``column`` on for the scopes of ``scope_ids``."""
    return f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            UPDATE {scopes} s SET {column} = s.{column} + 1
            WHERE s.id IN ({scope_ids});
            RETURN NULL;
        END $body$"""


#: A statement trigger's event, its transition table and its name's suffix.
Event = tuple[str, str, str]
WRITES: tuple[Event, ...] = (("INSERT", "NEW", "i"), ("UPDATE", "NEW", "u"), ("DELETE", "OLD", "d"))
#: The writes that are not appends.
REWRITES = WRITES[1:]


def _on_every_write(
    t: Tables, table: str, name: str, function: str, events: tuple[Event, ...] = WRITES
) -> list[str]:
    """Statement triggers running ``function`` after each of ``events`` (every insert, update
    and delete by default) on ``table``, the rows written as ``touched``."""
    return [
        f"CREATE TRIGGER {t.index(name + suffix)} AFTER {event} ON {table} "
        f"REFERENCING {rows} TABLE AS touched FOR EACH STATEMENT "
        f"EXECUTE FUNCTION {function}()"
        for event, rows, suffix in events
    ]


def _version_of_table(
    t: Tables, column: str, table: str, events: tuple[Event, ...] = WRITES
) -> list[str]:
    """The scopes' ``column``, moved on by every statement of ``events`` on ``table`` (its
    rows' ``scope_id``) and by nothing else."""
    bump = t.index(f"_{column}_bump")
    return [
        f"ALTER TABLE {t.scopes} ADD COLUMN IF NOT EXISTS {column} bigint NOT NULL DEFAULT 0",
        _version_function(bump, t.scopes, "SELECT scope_id FROM touched", column),
        *_on_every_write(t, table, f"_{column}_", bump, events),
    ]


def m012_keyword_versions(t: Tables, dim: int) -> list[str]:
    """Each scope's ``kw_version``, moved on by every statement that writes its postings, and
    by nothing else: the postings cache (``search_keyword_reads``) holds a scope's terms at
    its ``(kw_version, mem_version)``. An add writes its postings in one statement, so it
    moves ``kw_version`` by exactly one whatever entities and links its transaction writes
    (those move ``ent_version``): the writing process appends the new memories' postings to
    its cache from the versions before to those after (``KeywordCache.extend``), as it
    appends their vectors (m010), instead of its next search reading the query's terms'
    postings again."""
    return _version_of_table(t, "kw_version", t.postings)


def m013_entity_vector_versions(t: Tables, dim: int) -> list[str]:
    """Each scope's ``ev_version``, moved on by every statement that inserts, changes or
    deletes its entities, and not by their links: the entity vectors cache
    (``search_near_cache.EntityVectors``) holds a scope's at its ``ev_version``. An add
    inserts its new entities in one statement (which moves it only when it inserts a row):
    the writing process appends them to its cache (``EntityVectors.follow``), as it appends
    its memories' vectors (m010), instead of its next search loading every entity vector of
    the scope again (20k entities of a 10k-memory scope: ~15 ms over loopback)."""
    return _version_of_table(t, "ev_version", t.entities)


def m014_rewrite_counts(t: Tables, dim: int) -> list[str]:
    """Each scope's counts of rewrites of its memories' vectors (``mem_rewrites``: a memory
    deleted, or its vector or scope changed) and of its entities (``ev_rewrites``: deleted or
    changed), by statement-level triggers as the versions'. While a count stays what a
    process's cached matrix was read at, the rows its version moved on by are added ones,
    with seqs above the matrix's last (a scope's writers hold its row lock from before their
    first insert to their commit): the process reads those alone (``dense_cache.load_scopes``
    with the matrix's last seq), not the whole scope again, after another process's add."""
    scopes = t.scopes
    memories, changed = t.index("_mem_rewrites_bump"), t.index("_mem_rewrites_update")
    return [
        f"ALTER TABLE {scopes} ADD COLUMN IF NOT EXISTS mem_rewrites bigint NOT NULL DEFAULT 0",
        _version_function(memories, scopes, "SELECT scope_id FROM touched", "mem_rewrites"),
        _version_function(
            changed,
            scopes,
            "SELECT unnest(ARRAY[o.scope_id, n.scope_id]) FROM previous o "
            "JOIN touched n ON n.id = o.id "
            "WHERE (o.embedding, o.scope_id) IS DISTINCT FROM (n.embedding, n.scope_id)",
            "mem_rewrites",
        ),
        f"CREATE TRIGGER {t.index('_mem_rewrites_d')} AFTER DELETE ON {t.mem} "
        f"REFERENCING OLD TABLE AS touched FOR EACH STATEMENT EXECUTE FUNCTION {memories}()",
        f"CREATE TRIGGER {changed} AFTER UPDATE ON {t.mem} REFERENCING OLD TABLE AS previous "
        f"NEW TABLE AS touched FOR EACH STATEMENT EXECUTE FUNCTION {changed}()",
        *_version_of_table(t, "ev_rewrites", t.entities, REWRITES),
    ]


def m015_keyword_rewrites(t: Tables, dim: int) -> list[str]:
    """Each scope's count of rewritten postings (``kw_rewrites``: a posting deleted or
    changed), by statement-level triggers: while it and ``mem_rewrites`` (m014) stay what a
    process's cached postings were read at, the postings its ``kw_version`` moved on by are
    those of memories added since (seqs above the last cached row's), which it reads alone
    (``search_keyword_reads.postings_after``) after another process's add."""
    return _version_of_table(t, "kw_rewrites", t.postings, REWRITES)
