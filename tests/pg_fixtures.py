"""Session fixtures for the throwaway PostgreSQL servers (imported by ``tests/conftest.py``).

Each fixture starts its server only when a test first asks for it, yields the DSN of a fresh
database and stops the server at the end of the session. Tests isolate themselves with a unique
``collection`` name, not a database of their own. With ``LINKMEM_TEST_PG_DSN`` set, both
fixtures create their database on that server instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pgserver import running_server


@pytest.fixture(scope="session")
def pg_dsn_18() -> Iterator[str]:
    with running_server("18") as dsn:
        yield dsn


@pytest.fixture(scope="session")
def pg_dsn_16() -> Iterator[str]:
    with running_server("16") as dsn:
        yield dsn
