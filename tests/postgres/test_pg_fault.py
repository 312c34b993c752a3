"""PostgreSQL outage: while the server is down every call fails fast with ``BackendUnavailable``
saying the server is unreachable, calls succeed again within seconds of its return, and nothing
is half-written (a crash rolls back every unacknowledged transaction). A pool that is merely
busy is not mistaken for an outage."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from helpers import CapitalisedWordsExtractor
from pg_fixtures import restartable_pg  # noqa: F401 (fixture)
from pgserver import BundledServer

from linkmem import BackendUnavailable, Memory, StoreError
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.postgres import PostgresStore, connection
from linkmem.types import Scope

pytestmark = pytest.mark.postgres

#: No call may take longer than this, whether the server is up, down or coming back.
CALL_BOUND = 5.0
#: Calls succeed again at most this long after the restarted server accepts connections.
RECOVERY_BOUND = 5.0
NAMES = {"Max", "Oscar", "Lisbon"}


@dataclass
class Outcome:
    """What the loop saw: acknowledged and failed adds, every call's time and error."""

    added: dict[str, str] = field(default_factory=dict)  # text -> id
    failed_texts: list[str] = field(default_factory=list)
    calls: list[tuple[float, float, Exception | None]] = field(default_factory=list)

    def timed(self, call: Callable[[], object]) -> bool:
        """Run one call; record (end time, seconds, error). True when it succeeded."""
        started = time.monotonic()
        error: Exception | None = None
        try:
            call()
        except BackendUnavailable as e:
            error = e
        ended = time.monotonic()
        self.calls.append((ended, ended - started, error))
        return error is None

    def step(self, memory: Memory, n: int) -> bool:
        """One add and one search; True when both succeeded."""
        text = f"Max met Oscar in Lisbon, note {n}"

        def add() -> None:
            self.added[text] = memory.add(text, user_id="u")["results"][0]["id"]

        if not self.timed(add):
            self.failed_texts.append(text)
            return False
        return self.timed(lambda: memory.search("Where did Max go?", user_id="u"))

    def first_error_after(self, moment: float) -> tuple[float, Exception]:
        return next((end, e) for end, _, e in self.calls if e is not None and end >= moment)

    def errors(self) -> int:
        return sum(e is not None for *_, e in self.calls)


class Crash:
    """Stops the server as a crash (``pg_ctl stop -m immediate``) from another thread, while
    the loop runs; ``issued_at`` is when the stop began, ``done`` is set once it is down."""

    def __init__(self, server: BundledServer, delay: float = 0.2) -> None:
        self.issued_at = float("inf")
        self.done = threading.Event()
        self._server = server
        threading.Timer(delay, self._stop).start()

    def _stop(self) -> None:
        self.issued_at = time.monotonic()
        self._server.stop("immediate")
        self.done.set()


@pytest.fixture
def memory(restartable_pg: BundledServer) -> Iterator[Memory]:  # noqa: F811
    opened = Memory(
        store="postgres",
        postgres={"dsn": restartable_pg.dsn},
        collection="fault",
        embedder=FakeEmbedder(),
        extractor=CapitalisedWordsExtractor(),
    )
    yield opened
    opened.close()


@pytest.mark.slow
def test_an_outage_fails_fast_and_the_store_recovers(memory, restartable_pg):  # noqa: F811
    server, seen, n = restartable_pg, Outcome(), 0
    for n in range(10):
        assert seen.step(memory, n)

    crash = Crash(server)
    while not crash.done.is_set() or seen.errors() < 3:
        seen.step(memory, n := n + 1)
        time.sleep(0.02)
    failed_at, error = seen.first_error_after(crash.issued_at)
    assert "unreachable" in str(error) and "LINKMEM_PG_DSN" in str(error)

    server.start()
    restarted_at = time.monotonic()
    while not seen.step(memory, n := n + 1):
        assert time.monotonic() - restarted_at < 30, "the store did not recover"
    recovered = seen.calls[-1][0] - restarted_at
    for _ in range(5):
        assert seen.step(memory, n := n + 1)

    slowest = max(seconds for _, seconds, _ in seen.calls)
    slowest_failure = max(seconds for _, seconds, e in seen.calls if e is not None)
    print(
        f"\nfirst BackendUnavailable {failed_at - crash.issued_at:.2f}s after the stop "
        f"({seen.errors()} failed calls, slowest {slowest_failure:.2f}s); recovered "
        f"{recovered:.2f}s after the restart; slowest call {slowest:.2f}s"
    )
    assert slowest < CALL_BOUND
    assert recovered < RECOVERY_BOUND
    assert_nothing_half_written(memory, seen)


def assert_nothing_half_written(memory: Memory, seen: Outcome) -> None:
    """Every acknowledged add is there with its links and history; a failed one is absent
    (or, when only its acknowledgement was lost, complete)."""
    present = {r["memory"]: r["id"] for r in memory.get_all(user_id="u", limit=1000)["results"]}
    assert set(seen.added) <= set(present)
    assert set(present) <= set(seen.added) | set(seen.failed_texts)
    for text, memory_id in present.items():
        linked = memory.memory_entities(memory_id)["results"]
        assert {e["entity"] for e in linked} == NAMES, text
        assert [e["event"] for e in memory.history(memory_id)["results"]] == ["ADD"]
    counts = {e["entity"]: e["link_count"] for e in memory.entities(user_id="u")["results"]}
    assert counts == dict.fromkeys(NAMES, len(present))
    store = memory.store
    n_docs = store.db.value(f"SELECT n_docs FROM {store.t.scopes}")  # type: ignore[attr-defined]
    assert n_docs == len(present) == store.count_memories(Scope("u"))


# a busy pool is not an outage ----------------------------------------------------------------
@pytest.fixture
def one_connection_store(pg_dsn_18: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_dsn_18, 8, "busy", pool_min=1, pool_max=1)
    yield store
    store.close()


def hold_the_only_connection(store: PostgresStore, seconds: float) -> threading.Thread:
    taken = threading.Event()

    def hold() -> None:
        with store.transaction():
            taken.set()
            time.sleep(seconds)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait(5)
    return holder


def test_a_wait_for_a_busy_pool_outlasts_the_probe(one_connection_store):
    store = one_connection_store
    holder = hold_the_only_connection(store, 2.5 * connection.PROBE_AFTER)
    assert store.get_meta("missing") is None  # waited past several probes, then got it
    holder.join()


def test_an_exhausted_pool_says_busy_not_unreachable(one_connection_store, monkeypatch):
    store = one_connection_store
    monkeypatch.setattr(connection, "POOL_TIMEOUT", 2.5 * connection.PROBE_AFTER)
    holder = hold_the_only_connection(store, 4 * connection.PROBE_AFTER)
    with pytest.raises(StoreError, match="every pooled connection is busy") as caught:
        store.get_meta("missing")
    assert not isinstance(caught.value, BackendUnavailable)
    holder.join()
