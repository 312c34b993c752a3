"""The storage contract runs on every backend and over HTTP: ``RemoteMemory`` against a
``linkmem serve`` on SQLite and on PostgreSQL (see ``make_memory`` in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest
from backends import BACKENDS, REMOTE_BACKENDS


@pytest.fixture(params=[*BACKENDS, *REMOTE_BACKENDS])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param
