"""The PostgreSQL schema as named, ordered migrations recorded in ``linkmem_migrations``.

Every migration runs in its own transaction under an advisory lock, so processes opening the
same database at the same time apply each migration exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from linkmem.errors import BackendUnavailable, MigrationError, StoreError
from linkmem.store.postgres.connection import Database
from linkmem.store.postgres.keys import keys_table
from linkmem.store.postgres.sql import Tables
from linkmem.store.postgres.version_triggers import (
    m010_memory_versions,
    m011_search_versions,
    m012_keyword_versions,
    m013_entity_vector_versions,
    m014_rewrite_counts,
    m015_keyword_rewrites,
)

#: pgvector's HNSW index takes vectors of at most this many dimensions.
HNSW_MAX_DIM = 2000
#: pg_advisory_xact_lock key held while linkmem creates or migrates tables ("linkmem").
LOCK_KEY = 0x6C696E6B6D656D


def m001_initial(t: Tables, dim: int) -> list[str]:
    statements = [
        f"""CREATE TABLE {t.scopes} (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id text COLLATE "C" NOT NULL, agent_id text COLLATE "C" NOT NULL,
            run_id text COLLATE "C" NOT NULL,
            n_docs bigint NOT NULL DEFAULT 0, total_len bigint NOT NULL DEFAULT 0,
            UNIQUE (user_id, agent_id, run_id))""",
        f"CREATE INDEX {t.index('_scopes_agent')} ON {t.scopes} (agent_id)",
        f"CREATE INDEX {t.index('_scopes_run')} ON {t.scopes} (run_id)",
        f"""CREATE TABLE {t.mem} (
            id text COLLATE "C" PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            scope_id bigint NOT NULL REFERENCES {t.scopes} (id),
            text text NOT NULL, metadata jsonb NOT NULL,
            role text, actor_id text,
            created_at text COLLATE "C" NOT NULL, updated_at text COLLATE "C" NOT NULL,
            doc_len integer NOT NULL, embedding vector({dim}) NOT NULL)""",
        f"CREATE INDEX {t.index('_by_scope')} ON {t.mem} (scope_id, created_at, seq)",
        f"""CREATE TABLE {t.postings} (
            scope_id bigint NOT NULL REFERENCES {t.scopes} (id),
            term text COLLATE "C" NOT NULL,
            memory text COLLATE "C" NOT NULL REFERENCES {t.mem} (id) ON DELETE CASCADE,
            tf integer NOT NULL,
            PRIMARY KEY (scope_id, term, memory))""",
        f"CREATE INDEX {t.index('_postings_memory')} ON {t.postings} (memory)",
        f"""CREATE TABLE {t.entities} (
            id text COLLATE "C" PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            scope_id bigint NOT NULL REFERENCES {t.scopes} (id),
            key text COLLATE "C" NOT NULL, text text NOT NULL, kind text NOT NULL,
            created_at text COLLATE "C" NOT NULL, embedding vector({dim}) NOT NULL,
            UNIQUE (scope_id, key))""",
        f"""CREATE TABLE {t.links} (
            entity text COLLATE "C" NOT NULL REFERENCES {t.entities} (id) ON DELETE CASCADE,
            memory text COLLATE "C" NOT NULL REFERENCES {t.mem} (id) ON DELETE CASCADE,
            PRIMARY KEY (entity, memory))""",
        f"CREATE INDEX {t.index('_links_memory')} ON {t.links} (memory, entity)",
        f"""CREATE TABLE {t.history} (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            memory_id text COLLATE "C" NOT NULL, event text NOT NULL,
            old_text text, new_text text, created_at text NOT NULL, role text, actor_id text)""",
        f"CREATE INDEX {t.index('_history_memory')} ON {t.history} (memory_id, id)",
    ]
    if dim <= HNSW_MAX_DIM:
        statements += [
            f"CREATE INDEX {t.index('_hnsw')} ON {t.mem} USING hnsw (embedding vector_cosine_ops)",
            f"CREATE INDEX {t.index('_entities_hnsw')} ON {t.entities} "
            "USING hnsw (embedding vector_cosine_ops)",
        ]
    return statements


def m002_api_keys(t: Tables, dim: int) -> list[str]:
    return [
        f"""CREATE TABLE {keys_table(t)} (
            id text COLLATE "C" PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            key_hash text COLLATE "C" NOT NULL,
            name text, role text NOT NULL,
            user_id text COLLATE "C", agent_id text COLLATE "C",
            created_at text COLLATE "C" NOT NULL, revoked_at text COLLATE "C",
            prefix text NOT NULL)""",
        f"CREATE UNIQUE INDEX {t.index('_api_keys_hash')} ON {keys_table(t)} (key_hash)",
    ]


def m003_link_counts(t: Tables, dim: int) -> list[str]:
    """Each entity's link count in a table of its own, kept by statement-level triggers on
    ``links`` in the transaction that writes the links (so every writer, cascade and older
    process keeps it exact). Reading an entity then costs one key lookup instead of counting
    its links (154 on average for a hub of a 10k-memory scope: 3.3 of the 5.6 ms of
    "entities of the pool"). The triggers are created before the backfill: their lock on
    ``links`` holds concurrent link writers until this migration commits."""
    counts = t.link_counts
    add, sub = t.index("_link_counts_add"), t.index("_link_counts_sub")
    return [
        f"""CREATE TABLE {counts} (
            entity text COLLATE "C" PRIMARY KEY
                REFERENCES {t.entities} (id) ON DELETE CASCADE,
            n bigint NOT NULL)""",
        f"""CREATE FUNCTION {add}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            INSERT INTO {counts} AS c (entity, n)
            SELECT entity, count(*) FROM added GROUP BY entity ORDER BY entity
            ON CONFLICT (entity) DO UPDATE SET n = c.n + excluded.n;
            RETURN NULL;
        END $body$""",
        f"""CREATE FUNCTION {sub}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            UPDATE {counts} AS c SET n = c.n - r.n
            FROM (SELECT entity, count(*) AS n FROM removed GROUP BY entity) r
            WHERE c.entity = r.entity;
            RETURN NULL;
        END $body$""",
        f"CREATE TRIGGER {add} AFTER INSERT ON {t.links} REFERENCING NEW TABLE AS added "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {add}()",
        f"CREATE TRIGGER {sub} AFTER DELETE ON {t.links} REFERENCING OLD TABLE AS removed "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {sub}()",
        f"INSERT INTO {counts} (entity, n) SELECT entity, count(*) FROM {t.links} GROUP BY entity",
    ]


def m004_bm25_covering(t: Tables, dim: int) -> list[str]:
    """What SQL BM25 reads of each matching posting and memory, in their indexes: the
    postings key carries ``tf`` and a memory index carries ``doc_len``, so the read takes
    neither from the table (a memory row, with its vector, is a page read of its own). In
    the 10k-memory scope of ``bench_scale`` (20k memories, a query matching 974 memories,
    EXPLAIN ANALYZE at load ~7): the memory lookups 12 -> 1.9 ms, the postings 1.2 -> 0.14
    ms. The postings key is rebuilt (the table is locked while it is)."""
    key = t.index("_postings_pkey")
    return [
        f"CREATE INDEX {t.index('_doc_len')} ON {t.mem} (id) INCLUDE (doc_len)",
        f"ALTER TABLE {t.postings} DROP CONSTRAINT {key}, "
        f"ADD CONSTRAINT {key} PRIMARY KEY (scope_id, term, memory) INCLUDE (tf)",
    ]


def m005_context_terms(t: Tables, dim: int) -> list[str]:
    """Neighbour words in the keyword index (``linkmem.rank.neighbour_terms``): a posting's
    ``ctx`` is its context weight beside its own ``tf`` (a context-only term has ``tf`` 0), a
    memory's ``ctx_len`` its context length beside ``doc_len``, a scope's ``ctx_total`` their
    sum; integers in 1/CONTEXT_SCALE units, so sums stay exact. Existing rows get 0 (no
    context: their BM25 is unchanged). The covering indexes of m004 carry the new columns
    too (both are rebuilt)."""
    key, doc_len = t.index("_postings_pkey"), t.index("_doc_len")
    return [
        f"ALTER TABLE {t.postings} ADD COLUMN IF NOT EXISTS ctx integer NOT NULL DEFAULT 0",
        f"ALTER TABLE {t.mem} ADD COLUMN IF NOT EXISTS ctx_len bigint NOT NULL DEFAULT 0",
        f"ALTER TABLE {t.scopes} ADD COLUMN IF NOT EXISTS ctx_total bigint NOT NULL DEFAULT 0",
        f"DROP INDEX {doc_len}",
        f"CREATE INDEX {doc_len} ON {t.mem} (id) INCLUDE (doc_len, ctx_len)",
        f"ALTER TABLE {t.postings} DROP CONSTRAINT {key}, "
        f"ADD CONSTRAINT {key} PRIMARY KEY (scope_id, term, memory) INCLUDE (tf, ctx)",
    ]


def m006_posting_lengths(t: Tables, dim: int) -> list[str]:
    """Each posting carries its memory's ``doc_len`` and ``ctx_len`` (as SQLite's do), in the
    postings key's index: BM25 reads the query terms' postings alone instead of looking up
    each matching memory's length (~1,500 lookups for a query in a 10k-memory scope since
    neighbour words; EXPLAIN ANALYZE of 30 queries in the 10k scope of ``bench_scale``, load
    ~13: top-k 24.0 -> 10.5 ms, the pool's scores 9.5 -> 4.5 ms). Writes give every posting
    its memory's lengths; ``check`` reports a posting whose copy differs as stray and
    ``repair`` copies them again. The columns are filled from the memories here, then the
    key is rebuilt (the table is locked while it is)."""
    key = t.index("_postings_pkey")
    return [
        f"ALTER TABLE {t.postings} ADD COLUMN IF NOT EXISTS doc_len integer NOT NULL DEFAULT 0, "
        "ADD COLUMN IF NOT EXISTS ctx_len bigint NOT NULL DEFAULT 0",
        f"UPDATE {t.postings} p SET doc_len = m.doc_len, ctx_len = m.ctx_len FROM {t.mem} m "
        "WHERE m.id = p.memory AND (p.doc_len, p.ctx_len) IS DISTINCT FROM (m.doc_len, m.ctx_len)",
        f"ALTER TABLE {t.postings} DROP CONSTRAINT {key}, ADD CONSTRAINT {key} "
        "PRIMARY KEY (scope_id, term, memory) INCLUDE (tf, ctx, doc_len, ctx_len)",
    ]


def m007_link_origin(t: Tables, dim: int) -> list[str]:
    """Whether a link is the memory's own (an entity its text names) or inherited (a name it
    refers back to, ``linkmem.entities.inherit``): link counts, orphans and the second hop read
    own links only, the boosts read both. Existing links are own (a column with a constant
    default: no rewrite). The count triggers of m003 now count own links, and a third one
    follows a link turned own (an own link written over an inherited one); the counts need
    no backfill, every link so far being own."""
    counts = t.link_counts
    add, sub = t.index("_link_counts_add"), t.index("_link_counts_sub")
    turn = t.index("_link_counts_turn")
    return [
        f"ALTER TABLE {t.links} ADD COLUMN IF NOT EXISTS own boolean NOT NULL DEFAULT true",
        f"""CREATE OR REPLACE FUNCTION {add}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            INSERT INTO {counts} AS c (entity, n)
            SELECT entity, count(*) FROM added WHERE own GROUP BY entity ORDER BY entity
            ON CONFLICT (entity) DO UPDATE SET n = c.n + excluded.n;
            RETURN NULL;
        END $body$""",
        f"""CREATE OR REPLACE FUNCTION {sub}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            UPDATE {counts} AS c SET n = c.n - r.n
            FROM (SELECT entity, count(*) AS n FROM removed WHERE own GROUP BY entity) r
            WHERE c.entity = r.entity;
            RETURN NULL;
        END $body$""",
        f"""CREATE FUNCTION {turn}() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            INSERT INTO {counts} AS c (entity, n)
            SELECT entity, sum(d) FROM (
                SELECT entity, 1 AS d FROM changed WHERE own
                UNION ALL SELECT entity, -1 FROM previous WHERE own) x
            GROUP BY entity HAVING sum(d) <> 0 ORDER BY entity
            ON CONFLICT (entity) DO UPDATE SET n = c.n + excluded.n;
            RETURN NULL;
        END $body$""",
        f"CREATE TRIGGER {turn} AFTER UPDATE ON {t.links} REFERENCING OLD TABLE AS previous "
        f"NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {turn}()",
    ]


def m008_memory_seq(t: Tables, dim: int) -> list[str]:
    """Each memory's ``seq`` by its id in an index of its own: the memory lists of entities
    (``memories_of_entities``, and a search's lists of the entities near the query, in memory
    seq order) read it from the index instead of each memory's row (a heap page per memory,
    its vector beside it). In the 10k-memory scope of ``bench_scale`` the nearest entities'
    lists join ~2,600 links to their memories; their statement took 2.47 instead of 3.32 ms
    (mean of 99 searches, EXPLAIN ANALYZE, load ~3.5)."""
    return [f"CREATE INDEX IF NOT EXISTS {t.index('_id_seq')} ON {t.mem} (id) INCLUDE (seq)"]


def m009_links_by_entity(t: Tables, dim: int) -> list[str]:
    """An entity's links with their origin in an index of their own (the key's index has no
    ``own``, m007): the memory lists of entities read no link row either (with m008, the
    lists are read from indexes alone). 20k memories (``bench_scale``), 99 searches of the
    10k scope, EXPLAIN ANALYZE (TIMING OFF) alternating without/with it: the nearest
    entities' statement 3.41 -> 1.98 ms mean, the pool's links in 100-memory scopes 4.04 ->
    3.70 ms median (load ~5); adding 4,000 memories in batches of 100, interleaved: 392 vs
    384 ms per batch (load ~7). A separate index, not the key rebuilt with ``INCLUDE (own)``:
    dropping ``own`` (a store taken back before m007) would drop the key with it."""
    name = t.index("_links_entity_own")
    return [f"CREATE INDEX IF NOT EXISTS {name} ON {t.links} (entity, memory) INCLUDE (own)"]


def m016_scope_seq(t: Tables, dim: int) -> list[str]:
    """The memories and the entities by scope and seq: a cached scope catching up with
    another process's adds (``dense_cache.load_scopes``, ``search_keyword_reads.
    postings_after``) seeks to the rows after its last seq. Without it the 10k bench scope's
    catch-up of one memory scanned the whole table (EXPLAIN ANALYZE: 4.2 -> 0.04 ms, with
    ``load_scopes``' lateral read; postings 0.35 -> 0.10 ms)."""
    return [
        f"CREATE INDEX IF NOT EXISTS {t.index('_scope_seq')} ON {t.mem} (scope_id, seq)",
        f"CREATE INDEX IF NOT EXISTS {t.index('_entities_scope_seq')} "
        f"ON {t.entities} (scope_id, seq)",
    ]


def m017_add_log(t: Tables, dim: int) -> list[str]:
    """The log of other processes' adds, whose caches follow them (``add_log``)."""
    return [
        f"""CREATE TABLE IF NOT EXISTS {t.add_log} (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            scope_id bigint NOT NULL, before_ent bigint NOT NULL, before_mem bigint NOT NULL,
            after_ent bigint NOT NULL, after_mem bigint NOT NULL, entities text[] NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS {t.index('_add_log_scope')} ON {t.add_log} (scope_id, id)",
    ]


def m018_add_log_links(t: Tables, dim: int) -> list[str]:
    """Each logged add's links, as two arrays (memory ids, entity ids): a reader's lists of
    the entities linked gain them (``add_log``)."""
    return [
        f"ALTER TABLE {t.add_log} ADD COLUMN IF NOT EXISTS link_memories text[] NOT NULL "
        "DEFAULT '{}', ADD COLUMN IF NOT EXISTS link_entities text[] NOT NULL DEFAULT '{}'"
    ]


Migration = Callable[[Tables, int], list[str]]
MIGRATIONS: list[tuple[str, Migration]] = [
    ("m001_initial", m001_initial),
    ("m002_api_keys", m002_api_keys),
    ("m003_link_counts", m003_link_counts),
    ("m004_bm25_covering", m004_bm25_covering),
    ("m005_context_terms", m005_context_terms),
    ("m006_posting_lengths", m006_posting_lengths),
    ("m007_link_origin", m007_link_origin),
    ("m008_memory_seq", m008_memory_seq),
    ("m009_links_by_entity", m009_links_by_entity),
    ("m010_memory_versions", m010_memory_versions),
    ("m011_search_versions", m011_search_versions),
    ("m012_keyword_versions", m012_keyword_versions),
    ("m013_entity_vector_versions", m013_entity_vector_versions),
    ("m014_rewrite_counts", m014_rewrite_counts),
    ("m015_keyword_rewrites", m015_keyword_rewrites),
    ("m016_scope_seq", m016_scope_seq),
    ("m017_add_log", m017_add_log),
    ("m018_add_log_links", m018_add_log_links),
]
SCHEMA_VERSION = len(MIGRATIONS)

_BOOTSTRAP = [
    "CREATE TABLE IF NOT EXISTS linkmem_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS linkmem_migrations (collection text NOT NULL, "
    "name text NOT NULL, applied_at text NOT NULL, PRIMARY KEY (collection, name))",
]


def hnsw_index_names(t: Tables) -> list[str]:
    return [t.index("_hnsw"), t.index("_entities_hnsw")]


def migrate(db: Database, t: Tables, dim: int) -> list[str]:
    """Create pgvector and the linkmem tables, apply pending migrations; returns their names."""
    with db.transaction() as conn:
        db.execute(conn, "SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        _ensure_vector(db, conn)
        for statement in _BOOTSTRAP:
            db.execute(conn, statement)
    applied = []
    for name, statements in MIGRATIONS:
        if _apply(db, t, dim, name, statements):
            applied.append(name)
    return applied


def applied_migrations(db: Database, collection: str) -> list[str]:
    rows = db.rows(
        "SELECT name FROM linkmem_migrations WHERE collection = %s ORDER BY name", (collection,)
    )
    return [r[0] for r in rows]


def _ensure_vector(db: Database, conn: object) -> None:
    if db.execute(conn, "SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    available = db.execute(
        conn, "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if not available:
        raise BackendUnavailable(
            f"the PostgreSQL server at {db.location} does not have pgvector; install it "
            "(https://github.com/pgvector/pgvector, version 0.8 or later) and retry"
        )
    try:
        db.execute(conn, "CREATE EXTENSION IF NOT EXISTS vector")
    except StoreError as e:
        raise BackendUnavailable(
            f"cannot create the pgvector extension in {db.location} ({e}); ask the database "
            "owner to run: CREATE EXTENSION vector"
        ) from e


def _apply(db: Database, t: Tables, dim: int, name: str, statements: Migration) -> bool:
    with db.transaction() as conn:
        db.execute(conn, "SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        done = {
            r[0]
            for r in db.execute(
                conn, "SELECT name FROM linkmem_migrations WHERE collection = %s", (t.c,)
            )
        }
        unknown = done - {n for n, _ in MIGRATIONS}
        if unknown:
            raise MigrationError(
                f"collection {t.c!r} was written by a newer linkmem (migrations "
                f"{sorted(unknown)}); upgrade linkmem to open it"
            )
        if name in done:
            return False
        try:
            for statement in statements(t, dim):
                conn.execute(statement)
        except Exception as e:
            raise MigrationError(f"migration {name} of collection {t.c!r} failed: {e}") from e
        db.execute(
            conn,
            "INSERT INTO linkmem_migrations VALUES (%s, %s, %s)",
            (t.c, name, datetime.now(UTC).isoformat()),
        )
    return True
