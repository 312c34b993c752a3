"""Fixtures of the explorer tests: a keyed server holding two users' conversations, and one
headless Chromium per module (skipped, with the reason, where Chromium is not installed)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser import Page, chromium, require_chromium
from corpus import open_store, seed_conversation
from server_fixtures import ServerProcess

#: The keys of the keyed server, by name: (tenant, role).
KEYS = {
    "admin": (None, "admin"),
    "alice": ("user:alice", "write"),
    "alice_read": ("user:alice", "read"),
    "dana": ("user:dana", "write"),
}


@dataclass
class KeyedServer:
    server: ServerProcess
    secrets: dict[str, str]

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    """Alice's and dana's conversations (the same one), and a key for each role."""
    home = tmp_path_factory.mktemp("explorer")
    settings = {"sqlite.path": str(home / "memory.db")}
    for user in ("alice", "dana"):
        seed_conversation(settings, user)
    with open_store(settings) as memory:
        secrets = {name: memory.keys.create(t, role, name)[1] for name, (t, role) in KEYS.items()}
    server = ServerProcess(settings, home)
    try:
        yield KeyedServer(server, secrets)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    require_chromium()
    with chromium() as session:
        yield session


@pytest.fixture
def page(driver: Any, keyed_server: KeyedServer, tmp_path: Path) -> Page:
    return Page(driver, keyed_server.url, tmp_path / "screenshots")
