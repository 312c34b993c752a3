"""benchmarks/fold_misses.py on the small synthetic set (FakeEmbedder, the real spaCy
extractor): every evidence turn ranked below 10 is reported with its gap and crowding."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import benchmark_module

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.errors import ConfigError
from linkmem.eval.locomo import load_locomo

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ROOT / "tests" / "data" / "synthetic_conversation_small.json"


def _script():
    return benchmark_module("fold_misses")


def _memory(tmp_path: Path, entities: bool = True) -> Memory:
    config = tmp_path / "config.toml"
    config.write_text("")
    return Memory(
        tmp_path / "m.db",
        embedder=FakeEmbedder(64),
        store="sqlite",
        entities=entities,
        config_file=config,
    )


def test_misses_are_the_evidence_below_the_top_ten(tmp_path: Path) -> None:
    fold_misses = _script()
    conv = load_locomo(SYNTHETIC)[0]
    memory = _memory(tmp_path)
    try:
        found = fold_misses.misses_of(conv, {1, 2, 3, 4}, memory)
    finally:
        memory.close()
    scored = [q for q in conv.questions if q.category in {1, 2, 3, 4} and q.evidence]
    assert found["evidence"] == sum(len(q.evidence) for q in scored)
    assert len(found["misses"]) <= found["evidence"]
    for miss in found["misses"]:
        assert miss["rank"] is None or miss["rank"] >= 10
        assert miss["gap"] is None or miss["gap"] >= 0
        assert 0 <= miss["crowding"] <= 10
    assert 0 < found["hub_share"] <= 1
    assert fold_misses.summary(conv.sample_id, found).startswith(f"{conv.sample_id}: missed")


def test_needs_entity_linking(tmp_path: Path) -> None:
    fold_misses = _script()
    conv = load_locomo(SYNTHETIC)[0]
    memory = _memory(tmp_path, entities=False)
    try:
        with pytest.raises(ConfigError):
            fold_misses.misses_of(conv, {1}, memory)
    finally:
        memory.close()
