"""Session fixtures for the throwaway PostgreSQL servers (imported by ``tests/conftest.py``).

Each fixture starts its server only when a test first asks for it, yields the DSN of a fresh
database and stops the server at the end of the session. Tests isolate themselves with a unique
``collection`` name, not a database of their own. With ``LINKMEM_TEST_PG_DSN`` set, both
fixtures create their database on that server instead.

``restartable_pg`` is a PostgreSQL 18 server of one test's own, for fault tests that stop it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from pgserver import (
    CRASH_SAFE_SETTINGS,
    ENV_DSN,
    BundledServer,
    bundled_cluster,
    running_server,
    sigterm_as_interrupt,
)


@pytest.fixture(scope="session")
def pg_dsn_18() -> Iterator[str]:
    with running_server("18") as dsn:
        yield dsn


@pytest.fixture(scope="session")
def pg_dsn_16() -> Iterator[str]:
    with running_server("16") as dsn:
        yield dsn


@pytest.fixture
def restartable_pg() -> Iterator[BundledServer]:
    """A started server that the test may stop (``stop("immediate")`` is a crash) and start
    again on the same port; removed afterwards. An external ``LINKMEM_TEST_PG_DSN`` server
    cannot be stopped by a test, so then the test is skipped."""
    if os.environ.get(ENV_DSN):
        pytest.skip(f"{ENV_DSN} is set: a fault test needs a server of its own to stop")
    sigterm_as_interrupt()
    with bundled_cluster("18", CRASH_SAFE_SETTINGS) as server:
        server.start()
        yield server
