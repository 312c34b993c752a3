"""Shared by the tests of PostgreSQL's in-process search caches (tests/postgres/test_pg_*_cache.py):
a seeded collection opened by two ``Memory`` objects, writes from another process, results
checked against the server's reads."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from helpers import CapitalisedWordsExtractor
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from search_reads_cases import QUERIES, plain_reads, seed

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.caches.entity_records import HopIndex
from linkmem.store.postgres.search_entity_cache import hop_links


def opened(
    dsn: str, collection: str, retrieval: Mapping[str, Any] | None = None, pool_max: int = 2
) -> Memory:
    """A ``Memory`` on ``collection`` with stand-in models and a pool of at most ``pool_max``."""
    return Memory(
        store="postgres",
        postgres={"dsn": dsn, "pool_min": 1, "pool_max": pool_max},
        collection=collection,
        embedder=FakeEmbedder(),
        extractor=CapitalisedWordsExtractor(),
        retrieval=dict(retrieval or {}),
    )


@contextmanager
def reader_and_writer(
    dsn: str, retrieval: Mapping[str, Any] | None = None
) -> Iterator[tuple[Memory, Memory]]:
    """A seeded collection (``search_reads_cases.seed``) opened twice: two caches, two pools."""
    collection = "c_" + uuid.uuid4().hex[:12]
    reader = seed(opened(dsn, collection, retrieval))
    writer = opened(dsn, collection, retrieval)
    try:
        yield reader, writer
    finally:
        reader.close()
        writer.close()


class RoundTripCounter:
    """A TCP proxy in front of the server that counts round trips: each time the client sends
    after the server has answered it, a new one starts."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.count = 0
        self._last = "server"
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for args in ((client, server, "client"), (server, client, "server")):
                threading.Thread(target=self._pump, args=args, daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, side: str) -> None:
        while data := _recv(src):
            with self._lock:
                if side == "client" and self._last == "server":
                    self.count += 1
                self._last = side
                dst.sendall(data)
        dst.close()

    def close(self) -> None:
        self.listener.close()


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


@contextmanager
def counted_round_trips(
    dsn: str, collection: str, retrieval: Mapping[str, Any] | None = None
) -> Iterator[tuple[Memory, Any]]:
    """``collection`` opened with a pool of one connection through a proxy that counts its
    round trips (``RoundTripCounter``): the ``Memory`` and the proxy."""
    parts = conninfo_to_dict(dsn)
    proxy = RoundTripCounter(str(parts.get("host") or "127.0.0.1"), int(parts.get("port") or 5432))
    memory = opened(
        make_conninfo(dsn, host="127.0.0.1", port=proxy.port), collection, retrieval, pool_max=1
    )
    try:
        yield memory, proxy
    finally:
        memory.close()
        proxy.close()


def in_another_process(dsn: str, collection: str, code: str) -> str:
    """Run ``code`` in a new Python process with ``m``, a ``Memory`` on ``collection`` (the
    same stand-in models); the last line it prints."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, "tests")
        from helpers import CapitalisedWordsExtractor
        from linkmem import Memory
        from linkmem.embed.fake import FakeEmbedder
        with Memory(store="postgres", postgres={{"dsn": {dsn!r}}},
                    collection={collection!r}, embedder=FakeEmbedder(),
                    extractor=CapitalisedWordsExtractor()) as m:
        """
    ) + textwrap.indent(textwrap.dedent(code), "    ")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1]


def add_from_another_process(dsn: str, collection: str, text: str) -> str:
    """Add ``text`` to alice's scope of ``collection`` from a new Python process; its id."""
    code = f'print(m.add({text!r}, user_id="alice", infer=False)["results"][0]["id"])'
    return in_another_process(dsn, collection, code)


Scores = list[list[tuple[str, float]]]
#: The entity caches' tests: the pool reads the links of entities of up to 6 links.
ENTITY_POOL = {"entity_pool_max_links": 6}


def scores_of(memory: Memory, queries: Sequence[str] = QUERIES) -> Scores:
    """Each query's top 8 in alice's scope: (id, score)."""
    out = []
    for query in queries:
        found = memory.search(query, user_id="alice", top_k=8)["results"]
        out.append([(h["id"], h["score"]) for h in found])
    return out


def scores_as_servers(memory: Memory, queries: Sequence[str] = QUERIES) -> Scores:
    """``scores_of``, checked against the plain path's (every read from the server)."""
    got = scores_of(memory, queries)
    with plain_reads():
        assert_same_scores(got, scores_of(memory, queries))
    return got


def assert_same_scores(got: Scores, expected: Scores) -> None:
    """The same memories in the same order, scores within float32 rounding of the cosines."""
    for mine, theirs in zip(got, expected, strict=True):
        assert [h[0] for h in mine] == [h[0] for h in theirs]
        assert all(abs(a[1] - b[1]) <= 2e-6 for a, b in zip(mine, theirs, strict=True))


def versions(memory: Memory) -> tuple[int, tuple[int, int]]:
    """alice's scope's id and (ent_version, mem_version)."""
    store: Any = memory.store
    t = store.t
    rows = store.db.rows(
        f"SELECT id, ent_version, mem_version FROM {t.scopes} WHERE user_id = 'alice'"
    )
    return int(rows[0][0]), (int(rows[0][1]), int(rows[0][2]))


def warmed(memory: Memory) -> None:
    for _ in range(3):  # lists, hop index and entity vectors are read from the second search
        scores_as_servers(memory)


def held_at(memory: Memory, scope_id: int) -> dict[str, Any]:
    """The versions each carried cache holds the scope at (None: no entry)."""
    store: Any = memory.store
    out = {}
    for name in ("row_cache", "near_details", "entity_cache"):
        entry = getattr(store, name)._entries.get(scope_id)
        out[name] = None if entry is None else entry.versions
    return out


def assert_carried_without(
    memory: Memory,
    scope_id: int,
    after: tuple[int, int],
    max_links: int,
    added: list[str],
    listed: Collection[str] = (),
) -> set[str]:
    """The entity cache carried to ``after`` holds no record of the entities linked to the
    memories ``added``; of those ``listed`` (their lists held before the add) the lists wait
    for ``added`` as rows, the others' lists are gone; its hop index is the one the server
    gives now. The entities linked."""
    store: Any = memory.store
    links: dict[str, set[str]] = {}
    for entity_id, memory_id in store.db.rows(
        f"SELECT entity, memory FROM {store.t.links} WHERE memory = ANY(%s)", [added]
    ):
        links.setdefault(entity_id, set()).add(memory_id)
    touched = set(links)
    cache = store.entity_cache
    assert not cache.lookup(scope_id, after, touched, False)
    entry = cache._entries[scope_id]
    carried = set(listed) & touched
    assert set(entry.links) & touched == carried
    assert {e: entry.pending[e] for e in carried} == {e: links[e] for e in carried}
    rows = store.db.rows(hop_links(store.t), [max_links, scope_id])
    fresh = HopIndex.of_links(max_links, [(r[2], r[3]) for r in rows if r[2] is not None])
    carried = store.entity_cache.hop_index(scope_id, after, max_links)
    assert carried is not None
    assert {e: set(m) for e, m in carried.members.items()} == {
        e: set(m) for e, m in fresh.members.items()
    }
    return touched


def assert_lists_as_servers(memory: Memory, scope_id: int, entity_ids: set[str]) -> None:
    """The entity cache's lists of ``entity_ids``, those held and settled, have as many rows
    as the server has links of each; at least one is held."""
    store: Any = memory.store
    entry = store.entity_cache._entries[scope_id]
    held = {e: rows for e, rows in entry.links.items() if e in entity_ids}
    assert held and not entry.pending.keys() & held.keys()
    rows = store.db.rows(
        f"SELECT entity, count(*) FROM {store.t.links} WHERE entity = ANY(%s) GROUP BY entity",
        [sorted(held)],
    )
    assert {e: len(r) for e, r in held.items()} == dict(rows)
