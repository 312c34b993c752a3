"""Test doubles that are not the system under test (a tiny rule-based entity extractor), and a
writer process for the concurrency tests."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from linkmem.extract.base import EntityKind, ExtractedEntity
from linkmem.rank.fusion import fuse_arrays
from linkmem.store.vectors import LoadedScope, MatrixCache, ScopeMatrix

#: A short question, a word, a paragraph and a text longer than the embedder's window: the
#: shapes the ONNX graph rewrites must embed as the plain graph does.
EMBEDDING_TEXTS = [
    "When did Caroline go to the LGBTQ support group?",
    "ok",
    "Max adopted a beagle from the shelter in Lisbon last spring. " * 3,
    "The garden shed needs a new roof. " * 40,
]

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_STOP = {"I", "The", "A", "An", "We", "My"}


class CapitalisedWordsExtractor:
    """Runs of capitalised words (except a few function words) are PROPER entities. Fast and
    deterministic, for contract tests of the store; the real spaCy extractor has its own."""

    description = "test: capitalised words"

    def __init__(self) -> None:
        self.batches = 0

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        self.batches += 1
        out = []
        for text in texts:
            found = {}
            for match in _CAPITALISED.finditer(text):
                if match.group(0) not in _STOP:
                    entity = ExtractedEntity(match.group(0), EntityKind.PROPER)
                    found.setdefault(entity.key, entity)
            out.append(list(found.values()))
        return out


def add_notes_from_process(settings: dict[str, Any], worker: int, start: Any) -> None:
    """A writer process: waits for ``start``, then adds 8 memories naming the same entities
    to scope ``team`` of the store ``settings`` open."""
    from linkmem import Memory
    from linkmem.embed.fake import FakeEmbedder

    start.wait(30)
    memory = Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)
    try:
        for i in range(8):
            memory.add(f"Worker {worker} note {i}: we met Ana Lopez in Paris", user_id="team")
    finally:
        memory.close()


def exported_rows(memory: Any, path: Path) -> list[dict[str, Any]]:
    """``memory``'s export to ``path``, read back row by row."""
    memory.export(path)
    return [json.loads(line) for line in path.read_text().splitlines()]


def older_export(memory: Any, folder: Path, version: int, field: str) -> Path:
    """``memory``'s export as an older linkmem wrote it: format ``version``, no row with
    ``field``."""
    rows = exported_rows(memory, folder / "out.jsonl")
    rows[0]["version"] = version
    for row in rows:
        row.pop(field, None)
    path = folder / f"v{version}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def fuse_by_id(
    candidates: Iterable[str], dense: Mapping[str, float], bm25: Mapping[str, float], *args: Any
) -> list[tuple[str, float]]:
    """``fuse_arrays`` of candidates whose signals are given by id (0 where one has none)."""
    ids = list(dict.fromkeys(candidates))
    cosines = np.array([dense.get(mid, 0.0) for mid in ids], dtype=np.float64)
    raw = np.array([bm25.get(mid, 0.0) for mid in ids], dtype=np.float64)
    return fuse_arrays(ids, cosines, raw, *args)


TESTS = Path(__file__).resolve().parent


def run_python(script: str, *args: str) -> str:
    """Run ``script`` (dedented) in a new Python process with ``args``, the tests' helpers
    importable; fail on a non-zero exit. What it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        check=True,
        env=env,
        timeout=120,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout


def benchmark_module(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported as a module (benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, TESTS.parent / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def recorded_loads(cache: MatrixCache) -> list[LoadedScope]:
    """What each load of ``cache`` reads from now on (the loader wrapped)."""
    seen: list[LoadedScope] = []
    original = cache._loader

    def recorded(scope_id: int, since: ScopeMatrix | None) -> LoadedScope:
        loaded = original(scope_id, since)
        seen.append(loaded)
        return loaded

    cache._loader = recorded
    return seen
