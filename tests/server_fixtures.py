"""Real ``linkmem serve`` processes for tests, on 127.0.0.1 and a free port, stopped at the
end. ``remote_sqlite`` and ``remote_postgres`` are session servers that the contract suite
runs ``RemoteMemory`` against (each test starts from a reset store)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

WORKER = Path(__file__).parent / "server_worker.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(
    url: str, process: subprocess.Popen, timeout: float = 60.0, probe: str = "/v1/ready"
) -> None:
    """Until ``url`` answers ``probe`` with 200; RuntimeError if the process exits or the
    time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}{probe}", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server was not ready in {timeout} s")


def stop_process(process: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class ServerProcess:
    """One server process; ``url`` once it is ready."""

    def __init__(self, settings: dict[str, Any], home: Path) -> None:
        self.settings = settings
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / f"server-{self.port}.log"
        env = {**os.environ, "LINKMEM_HOME": str(home)}
        home.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(WORKER), str(self.port), json.dumps(settings)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self.wait_ready()

    def wait_ready(self) -> None:
        try:
            wait_ready(self.url, self.process)
        except RuntimeError as e:
            self.stop()
            raise RuntimeError(f"{e}: {self.log.read_text()[-2000:]}") from e

    def stop(self) -> None:
        stop_process(self.process)


def start_server(settings: dict[str, Any], home: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(settings, home)
    try:
        yield server
    finally:
        server.stop()


#: The stores a test server can run on (PostgreSQL: version 18).
SERVER_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def store_settings(backend: str, home: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings of a fresh store for a server: a SQLite file in ``home``, or a collection of
    its own on the session's PostgreSQL 18."""
    if backend == "sqlite":
        return {"sqlite.path": str(home / "memory.db")}
    return {
        "store": "postgres",
        "postgres.dsn": request.getfixturevalue("pg_dsn_18"),
        "collection": "s_" + uuid.uuid4().hex[:12],
    }


@pytest.fixture(scope="session")
def remote_sqlite(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("server-sqlite")
    yield from start_server(store_settings("sqlite", home, request), home)


@pytest.fixture(scope="session")
def remote_postgres(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("server-postgres")
    yield from start_server(store_settings("postgres", home, request), home)
