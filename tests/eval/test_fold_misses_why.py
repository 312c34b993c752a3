"""benchmarks/fold_misses.py ``--why`` on the small synthetic set (the real default embedder,
the real spaCy extractor, a real SQLite file): a miss is sorted by the first cause that fits,
and the table counts the causes per conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import benchmark_module

from linkmem import Memory
from linkmem.eval.locomo import load_locomo

ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC = ROOT / "tests" / "data" / "synthetic_conversation_small.json"


def _script():
    return benchmark_module("fold_misses")


@pytest.fixture(scope="module")
def sorted_turns(tmp_path_factory):
    """The first small conversation in a real store, and its ``Why``."""
    fold_misses = _script()
    conv = load_locomo(SYNTHETIC)[0]
    memory = Memory(tmp_path_factory.mktemp("why") / "m.db", store="sqlite", entities=True)
    added = memory.add_batch([t.memory_text for t in conv.turns], user_id="u")
    why = fold_misses.Why(conv, memory, [r["id"] for r in added["results"]])
    yield fold_misses, why, {e.text: e.id for e in why.by_id.values()}
    memory.close()


@pytest.mark.parametrize(
    ("question", "names", "dia_id", "cause"),
    [
        # Alice says it; the question names Bob.
        ("What did Bob make for his mother's birthday?", ["Bob"], "D3:5", 0),
        # The turn names the Boston marathon the question matched, beside Bob.
        ("When did Bob finish the Boston marathon?", ["Bob", "Boston marathon"], "D2:1", 1),
        # "She put sunflowers in it": the turn before says "vase" and "mother".
        ("How did Alice's mother react to the vase?", ["Alice"], "D3:7", 3),
        ("How many miles does Bob run each week?", ["Bob"], "D1:6", 4),
        ("What does Alice think of quantum physics?", ["Alice"], "D1:9", 6),
    ],
)
def test_a_miss_is_sorted_by_the_first_cause_that_fits(
    sorted_turns, question, names, dia_id, cause
):
    fold_misses, why, entity_ids = sorted_turns
    matched = {entity_ids[name]: 1.0 for name in names}
    assert why.cause(question, matched, dia_id) == fold_misses.CAUSES[cause]


def test_the_table_counts_each_cause_per_conversation() -> None:
    fold_misses = _script()
    misses = [{"category": 1, "cause": c} for c in fold_misses.CAUSES[:2]] + [
        {"category": 4, "cause": fold_misses.CAUSES[0]}
    ]
    table = fold_misses.why_table({"a": {"misses": misses}}, {1})
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()[2:]}
    assert rows[fold_misses.CAUSES[0]].endswith("| 1 | 1 |")
    assert rows[fold_misses.CAUSES[1]].endswith("| 1 | 1 |")
    assert rows[fold_misses.CAUSES[6]].endswith("| 0 | 0 |")
    assert rows["**missed**"].endswith("| 2 | 2 |")


def test_without_why_no_cause_is_given(tmp_path: Path) -> None:
    fold_misses = _script()
    conv = load_locomo(SYNTHETIC)[0]
    memory = Memory(tmp_path / "m.db", store="sqlite", entities=True)
    try:
        found = fold_misses.misses_of(conv, {1}, memory)
    finally:
        memory.close()
    assert all(miss["cause"] is None for miss in found["misses"])
