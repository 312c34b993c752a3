"""One keyed ``linkmem serve`` process per backend (SQLite; PostgreSQL 18) for the HTTP suites
of this folder: tenant isolation, bad input, Mem0 compatibility.

Keys are created the way ``linkmem keys create`` does while a server runs: by an embedded
``Memory`` opened on the same store settings. Once a key exists the server requires keys, so
the suites set up and check with an admin key. The server takes small JSON bodies
(``server.max_body_mb``) so the bad-input suite can pass the limit cheaply.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from helpers import CapitalisedWordsExtractor
from http_checks import MAX_BODY_MB, MAX_UPLOAD_MB
from server_fixtures import SERVER_BACKENDS, ServerProcess, store_settings

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder

#: The keys every test may use, by name: (tenant, role).
KEYS = {
    "admin": (None, "admin"),
    "alice": ("user:alice", "write"),
    "alice_read": ("user:alice", "read"),
    "bob": ("user:bob", "write"),
    "coach": ("agent:coach", "write"),
}


@dataclass
class KeyedServer:
    """A running server, the embedded ``Memory`` that manages its keys, and an HTTP client."""

    server: ServerProcess
    memory: Memory
    secrets: dict[str, str]
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.server.url, timeout=30.0)

    @property
    def url(self) -> str:
        return self.server.url

    def auth(self, key: str | None) -> dict[str, str]:
        """The Authorization header of the named key (None: no header)."""
        return {} if key is None else {"Authorization": f"Bearer {self.secrets[key]}"}

    def call(self, method: str, path: str, key: str | None = "admin", **kw: Any) -> httpx.Response:
        """One request, authorised with the named key (None: no key)."""
        headers = {**self.auth(key), **kw.pop("headers", {})}
        return self.http.request(method, path, headers=headers, **kw)

    def ok(self, method: str, path: str, key: str | None = "admin", **kw: Any) -> Any:
        """One request that must succeed; its JSON."""
        response = self.call(method, path, key, **kw)
        assert response.status_code == 200, response.text
        return response.json()

    def reset(self) -> None:
        self.ok("POST", "/v1/reset")

    def new_key(self, tenant: str | None, role: str) -> tuple[str, str]:
        """A key created while the server runs: (key id, secret)."""
        key, secret = self.memory.keys.create(tenant, role)
        return key.id, secret


def _settings(backend: str, home: Any, request: pytest.FixtureRequest) -> dict[str, Any]:
    limits = {
        "server.max_body_mb": MAX_BODY_MB,
        "server.max_upload_mb": MAX_UPLOAD_MB,
        "max_text_chars": 20_000,  # under the body limit, so a long text is a 400, not a 413
    }
    return {**store_settings(backend, home, request), **limits}


@pytest.fixture(scope="session", params=SERVER_BACKENDS)
def keyed_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KeyedServer]:
    """The backend's server, with the ``KEYS`` created; the store is shared by the suites,
    so each test resets it (``api``)."""
    home = tmp_path_factory.mktemp(f"keyed-{request.param}")
    settings = _settings(request.param, home, request)
    server = ServerProcess(settings, home)
    try:
        memory = Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)
        try:
            secrets = {name: memory.keys.create(*spec)[1] for name, spec in KEYS.items()}
            keyed = KeyedServer(server, memory, secrets)
            yield keyed
            keyed.http.close()
        finally:
            memory.close()
    finally:
        server.stop()


@pytest.fixture
def api(keyed_server: KeyedServer) -> KeyedServer:
    """The server with an empty store (its keys kept: a reset does not touch them)."""
    keyed_server.reset()
    return keyed_server
