"""Fixtures of the PostgreSQL cache tests."""

from __future__ import annotations

from typing import Any

import pytest
from pg_cache_helpers import reader_and_writer


@pytest.fixture
def two(pg_dsn_18: str, request: pytest.FixtureRequest) -> Any:
    """A seeded collection opened by two ``Memory`` objects (two caches, two pools), with the
    test module's ``RETRIEVAL`` settings when it has some."""
    with reader_and_writer(pg_dsn_18, getattr(request.module, "RETRIEVAL", None)) as pair:
        yield pair
