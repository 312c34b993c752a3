"""The code base stays ruff-clean (part of the suite so CI enforces it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed; run: pip install -e '.[test]'")
    return subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean():
    result = _ruff("check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied():
    result = _ruff("format", "--check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr
