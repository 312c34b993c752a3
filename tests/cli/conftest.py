"""Every CLI test runs in its own LINKMEM_HOME with the fake embedder (spaCy stays real)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkmem.config import ENV_VARS


@pytest.fixture(autouse=True)
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LINKMEM_HOME", str(tmp_path))
    monkeypatch.setenv("LINKMEM_EMBEDDER", "fake")
    return tmp_path
