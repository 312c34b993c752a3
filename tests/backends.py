"""The backends the fixtures of ``tests/conftest.py`` are parametrised over."""

from __future__ import annotations

import pytest

BACKENDS = [
    "sqlite",
    pytest.param("postgres-18", marks=pytest.mark.postgres),
    pytest.param("postgres-16", marks=pytest.mark.postgres),
]
#: The contract suite also runs over ``RemoteMemory`` against a server on each backend.
REMOTE_BACKENDS = [
    pytest.param("remote-sqlite", marks=pytest.mark.remote),
    pytest.param("remote-postgres", marks=[pytest.mark.remote, pytest.mark.postgres]),
]
