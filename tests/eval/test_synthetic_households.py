"""The second synthetic generator (benchmarks/synthetic_households.py) is deterministic for a
seed, and what it writes is a LoCoMo file linkmem reads: every evidence id is a turn, every
session date parses, every category 1-5 is asked."""

from __future__ import annotations

import sys
from pathlib import Path

from linkmem.eval.locomo import parse_sample
from linkmem.rank.dates import parse_date

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import synthetic_households  # noqa: E402


def test_same_seed_same_data_other_seed_other_data() -> None:
    first = synthetic_households.generate(seed=3, conversations=3, turns=120)
    assert first == synthetic_households.generate(seed=3, conversations=3, turns=120)
    assert first != synthetic_households.generate(seed=4, conversations=3, turns=120)


def test_evidence_ids_are_turns_and_dates_parse() -> None:
    data = synthetic_households.generate(seed=5, conversations=3, turns=120)
    assert [d["relationship"] for d in data] == [
        "flatmates",
        "parent and adult child",
        "coach and athlete",
    ]
    for sample in data:
        conv = parse_sample(sample)
        assert {q.category for q in conv.questions} == {1, 2, 3, 4, 5}
        for question, raw in zip(conv.questions, sample["qa"], strict=True):
            assert question.evidence and list(question.evidence) == raw["evidence"]
        assert all(parse_date(t.session_date) is not None for t in conv.turns)
        assert len({t.dia_id for t in conv.turns}) == len(conv.turns)
