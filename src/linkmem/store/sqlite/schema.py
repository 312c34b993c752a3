"""Opening the SQLite file, and its schema as named, ordered migrations recorded in a table."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from linkmem.errors import MigrationError, StoreError
from linkmem.store.sqlite.driver import sqlite3

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 60000",
)


def open_database(path: str | Path) -> Any:
    """A connection to the SQLite file at ``path`` (created, with its folders, when missing)
    in WAL mode. A store needs the file and its folder to be writable (SQLite keeps
    ``<file>-wal`` and ``<file>-shm`` next to it); a path that cannot hold a store raises
    ``StoreError`` saying what to do, before anything is created."""
    if str(path) != ":memory:":
        check_path(Path(path))
    try:
        raw = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=60.0
        )
    except sqlite3.Error as e:
        raise StoreError(f"cannot open SQLite file {path}: {e}; check the path") from e
    try:
        for pragma in PRAGMAS:
            raw.execute(pragma)
    except sqlite3.DatabaseError as e:
        raw.close()
        raise StoreError(_open_failure(path, e)) from e
    return raw


def check_path(path: Path) -> None:
    """Refuse a path under a regular file, a folder, a read-only file or folder."""
    blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise StoreError(
            f"cannot put the SQLite file at {path}: {blocker} is a file, not a folder; "
            "choose a path inside a folder"
        )
    if path.is_dir():
        raise StoreError(
            f"{path} is a folder, not a SQLite file; pass a file path such as {path / 'memory.db'}"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(
            f"cannot create the folder {path.parent} for the SQLite file: {e.strerror}; "
            "choose a path in a folder you can write to"
        ) from e
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StoreError(
            f"the folder {path.parent} is read-only, and SQLite writes {path.name}-wal and "
            f"{path.name}-shm next to the store; make the folder writable or choose another path"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise StoreError(
            f"the SQLite file {path} is read-only; make it writable (chmod u+rw {path}) "
            "or open a writable copy"
        )


def _open_failure(path: str | Path, error: Exception) -> str:
    if "not a database" in str(error):
        return (
            f"{path} is not a SQLite database; pass the path of a linkmem store, "
            "or of a file that does not exist yet to start a new one"
        )
    return (
        f"cannot open SQLite file {path}: {error}; the file and its folder must be "
        "readable and writable"
    )


def m001_initial(c: str) -> list[str]:
    return [
        f"""CREATE TABLE {c}_scopes (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL, agent_id TEXT NOT NULL, run_id TEXT NOT NULL,
            n_docs INTEGER NOT NULL DEFAULT 0, total_len INTEGER NOT NULL DEFAULT 0,
            mem_version INTEGER NOT NULL DEFAULT 0, ent_version INTEGER NOT NULL DEFAULT 0,
            UNIQUE (user_id, agent_id, run_id))""",
        f"CREATE INDEX {c}_scopes_agent ON {c}_scopes (agent_id)",
        f"CREATE INDEX {c}_scopes_run ON {c}_scopes (run_id)",
        f"""CREATE TABLE {c} (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            scope_id INTEGER NOT NULL REFERENCES {c}_scopes (id),
            text TEXT NOT NULL, metadata TEXT NOT NULL,
            role TEXT, actor_id TEXT,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            doc_len INTEGER NOT NULL, embedding BLOB NOT NULL)""",
        f"CREATE INDEX {c}_by_scope ON {c} (scope_id, created_at)",
        f"""CREATE TABLE {c}_postings (
            scope_id INTEGER NOT NULL, term TEXT NOT NULL, memory INTEGER NOT NULL,
            tf INTEGER NOT NULL, doc_len INTEGER NOT NULL,
            PRIMARY KEY (scope_id, term, memory)) WITHOUT ROWID""",
        f"CREATE INDEX {c}_postings_memory ON {c}_postings (memory)",
        f"""CREATE TABLE {c}_entities (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            scope_id INTEGER NOT NULL REFERENCES {c}_scopes (id),
            key TEXT NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
            created_at TEXT NOT NULL, embedding BLOB NOT NULL,
            UNIQUE (scope_id, key))""",
        f"""CREATE TABLE {c}_links (
            entity INTEGER NOT NULL REFERENCES {c}_entities (rowid),
            memory INTEGER NOT NULL REFERENCES {c} (rowid),
            PRIMARY KEY (entity, memory)) WITHOUT ROWID""",
        f"CREATE INDEX {c}_links_memory ON {c}_links (memory, entity)",
        f"""CREATE TABLE {c}_history (
            id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, event TEXT NOT NULL,
            old_text TEXT, new_text TEXT, created_at TEXT NOT NULL, role TEXT, actor_id TEXT)""",
        f"CREATE INDEX {c}_history_memory ON {c}_history (memory_id, id)",
    ]


def m002_api_keys(c: str) -> list[str]:
    return [
        f"""CREATE TABLE {c}_api_keys (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            key_hash TEXT NOT NULL,
            name TEXT, role TEXT NOT NULL, user_id TEXT, agent_id TEXT,
            created_at TEXT NOT NULL, revoked_at TEXT, prefix TEXT NOT NULL)""",
        f"CREATE UNIQUE INDEX {c}_api_keys_hash ON {c}_api_keys (key_hash)",
    ]


def m003_context_terms(c: str) -> list[str]:
    """Neighbour words in the keyword index (``linkmem.rank.neighbour_terms``): a posting's
    ``ctx`` is its context weight beside its own ``tf`` (a context-only term has ``tf`` 0),
    ``ctx_len`` the memory's context length beside ``doc_len`` (on the memory and, for the
    search, on each posting), ``ctx_total`` a scope's sum of them; all in 1/CONTEXT_SCALE
    units. An older store's memories have no context (0), and search on them is unchanged."""
    return [
        f"ALTER TABLE {c}_postings ADD COLUMN ctx INTEGER NOT NULL DEFAULT 0",
        f"ALTER TABLE {c}_postings ADD COLUMN ctx_len INTEGER NOT NULL DEFAULT 0",
        f"ALTER TABLE {c} ADD COLUMN ctx_len INTEGER NOT NULL DEFAULT 0",
        f"ALTER TABLE {c}_scopes ADD COLUMN ctx_total INTEGER NOT NULL DEFAULT 0",
    ]


def m004_term_counts(c: str) -> list[str]:
    """Each scope's document frequency per term (how many postings the term has there) in
    ``{c}_terms``, kept by triggers on the postings in the transaction that writes them (every
    writer, repair and older process keeps it exact), so a search reads a query term's df as
    one key instead of counting its postings (with neighbour words a memory has ~3.6x more
    postings). Rows may reach df 0; they count as absent."""
    return [
        f"""CREATE TABLE {c}_terms (
            scope_id INTEGER NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
            PRIMARY KEY (scope_id, term)) WITHOUT ROWID""",
        f"""CREATE TRIGGER {c}_terms_add AFTER INSERT ON {c}_postings BEGIN
            INSERT INTO {c}_terms VALUES (new.scope_id, new.term, 1)
            ON CONFLICT (scope_id, term) DO UPDATE SET df = df + 1; END""",
        f"""CREATE TRIGGER {c}_terms_sub AFTER DELETE ON {c}_postings BEGIN
            UPDATE {c}_terms SET df = df - 1
            WHERE scope_id = old.scope_id AND term = old.term; END""",
        f"INSERT INTO {c}_terms SELECT scope_id, term, count(*) FROM {c}_postings "
        "GROUP BY scope_id, term",
    ]


def m005_link_origin(c: str) -> list[str]:
    """Whether a link is the memory's own (an entity its text names) or inherited (a name it
    refers back to, ``linkmem.entities.inherit``): link counts, orphans and the second hop read
    own links only, the boosts read both. Existing links are own."""
    return [f"ALTER TABLE {c}_links ADD COLUMN own INTEGER NOT NULL DEFAULT 1"]


def m006_rewrite_counts(c: str) -> list[str]:
    """Each scope's counts of rewrites, kept by triggers in the transaction that writes (every
    writer, older processes included): of its memories' vectors (``mem_rewrites``: a deleted
    memory, or one whose vector or scope changed), of its entities' (``ent_rewrites``,
    likewise) and of its postings (``kw_rewrites``: a deleted or changed posting; an add only
    inserts those of new memories). While a count stays what a process's cache was read at,
    the rows its scope's version moved on by are added ones, above the cache's last rowid:
    the process reads those alone (``memories.scope_loader``, ``keyword.KeywordTables.
    _caught_up``), not the whole scope again, after another process's add."""
    out = [f"ALTER TABLE {c}_scopes ADD COLUMN kw_rewrites INTEGER NOT NULL DEFAULT 0"]
    bump = f"UPDATE {c}_scopes SET kw_rewrites = kw_rewrites + 1 WHERE id"
    for event in ("DELETE", "UPDATE"):
        out.append(
            f"CREATE TRIGGER {c}_postings_kw_rewrites_{event.lower()} AFTER {event} ON "
            f"{c}_postings BEGIN {bump} = old.scope_id; END"
        )
    for table, column in ((c, "mem_rewrites"), (f"{c}_entities", "ent_rewrites")):
        bump = f"UPDATE {c}_scopes SET {column} = {column} + 1 WHERE id"
        out += [
            f"ALTER TABLE {c}_scopes ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0",
            f"CREATE TRIGGER {table}_{column}_delete AFTER DELETE ON {table} BEGIN "
            f"{bump} = old.scope_id; END",
            f"CREATE TRIGGER {table}_{column}_update AFTER UPDATE OF embedding, scope_id "
            f"ON {table} BEGIN {bump} IN (old.scope_id, new.scope_id); END",
        ]
    return out


def m007_scope_rowid_indexes(c: str) -> list[str]:
    """Indexes of the memories and the entities by scope alone, so by scope and rowid (an
    index's rows end with the rowid): reading a scope's rows added after a rowid (a cached
    scope catching up with another process's add, ``memories.scope_loader``; a page of a
    scope's records, ``scope_records``) seeks to them. The scope-and-date index made it walk
    all of the scope's entries (10k memories: ~1.9 ms a search after another process's
    add)."""
    return [
        f"CREATE INDEX IF NOT EXISTS {c}_scope_rowids ON {c} (scope_id)",
        f"CREATE INDEX IF NOT EXISTS {c}_entities_scope_rowids ON {c}_entities (scope_id)",
    ]


def m008_add_log(c: str) -> list[str]:
    """The log of other processes' adds, whose caches follow them (``add_log``)."""
    return [
        f"CREATE TABLE IF NOT EXISTS {c}_add_log (id INTEGER PRIMARY KEY, "
        "scope_id INTEGER NOT NULL, before_ent INTEGER NOT NULL, before_mem INTEGER NOT NULL, "
        "after_ent INTEGER NOT NULL, after_mem INTEGER NOT NULL, entities TEXT NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {c}_add_log_scope ON {c}_add_log (scope_id, before_mem)",
    ]


def m010_add_log_links(c: str) -> list[str]:
    """Each logged add's links, (memory id, entity id) pairs as JSON: a reader's lists of
    the entities linked gain them (``add_log``)."""
    return [f"ALTER TABLE {c}_add_log ADD COLUMN links TEXT NOT NULL DEFAULT '[]'"]


def m009_record_rewrites(c: str) -> list[str]:
    """The collection's count of rewritten memory records (a deleted memory, or one whose
    text, metadata, dates, role, actor or scope changed), kept by triggers in the writing
    transaction (every writer, older processes included). The record cache (``record_cache``)
    holds records while it stays what they were read at: another process's add, which only
    inserts new records, no longer drops the records and the scopes held whole (``PRAGMA
    data_version`` moved with every commit of another connection)."""
    bump = f"UPDATE {c}_record_rewrites SET n = n + 1"
    return [
        f"CREATE TABLE IF NOT EXISTS {c}_record_rewrites (n INTEGER NOT NULL)",
        f"INSERT INTO {c}_record_rewrites SELECT 0 WHERE NOT EXISTS "
        f"(SELECT 1 FROM {c}_record_rewrites)",
        f"CREATE TRIGGER IF NOT EXISTS {c}_record_rewrites_delete AFTER DELETE ON {c} "
        f"BEGIN {bump}; END",
        f"CREATE TRIGGER IF NOT EXISTS {c}_record_rewrites_update AFTER UPDATE OF text, "
        f"metadata, created_at, updated_at, role, actor_id, scope_id ON {c} BEGIN {bump}; END",
    ]


MIGRATIONS: list[tuple[str, Callable[[str], list[str]]]] = [
    ("m001_initial", m001_initial),
    ("m002_api_keys", m002_api_keys),
    ("m003_context_terms", m003_context_terms),
    ("m004_term_counts", m004_term_counts),
    ("m005_link_origin", m005_link_origin),
    ("m006_rewrite_counts", m006_rewrite_counts),
    ("m007_scope_rowid_indexes", m007_scope_rowid_indexes),
    ("m008_add_log", m008_add_log),
    ("m009_record_rewrites", m009_record_rewrites),
    ("m010_add_log_links", m010_add_log_links),
]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Any, collection: str) -> None:
    """Apply the migrations this file has not seen, each in its own transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS linkmem_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS linkmem_migrations ("
        "collection TEXT NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, "
        "PRIMARY KEY (collection, name))"
    )
    done = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM linkmem_migrations WHERE collection = ?", (collection,)
        )
    }
    unknown = done - {name for name, _ in MIGRATIONS}
    if unknown:
        raise MigrationError(
            f"this store was written by a newer linkmem (migrations {sorted(unknown)}); "
            "upgrade linkmem to open it"
        )
    for name, statements in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(collection):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO linkmem_migrations VALUES (?, ?, ?)",
                (collection, name, datetime.now(UTC).isoformat()),
            )
            conn.execute("COMMIT")
        except Exception as e:
            conn.execute("ROLLBACK")
            raise MigrationError(f"migration {name} failed: {e}") from e
