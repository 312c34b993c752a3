"""Pure metric functions: recall@k per question, aggregation by category, percentiles.

Groups are the category ids ``"1"`` .. ``"5"``, ``"1-4"`` (the headline: every question of
categories 1-4, micro-averaged) and ``"all"``. Keys are strings so results survive JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Category groups reported, in table order: the five ids, the headline and everything.
GROUPS: tuple[str, ...] = ("1", "2", "3", "4", "5", "1-4", "all")
_HEADLINE = frozenset({1, 2, 3, 4})


def recall_at_k(evidence: Sequence[str], ranking: Sequence[str], k: int) -> float:
    """The fraction of ``evidence`` ids among the first ``k`` ids of ``ranking``."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall is undefined for a question without evidence")
    return len(wanted & set(ranking[:k])) / len(wanted)


def recalls(evidence: Sequence[str], ranking: Sequence[str], ks: Iterable[int]) -> dict[str, float]:
    """``{str(k): recall@k}`` for every k."""
    return {str(k): recall_at_k(evidence, ranking, k) for k in ks}


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean, or None for no values."""
    return sum(values) / len(values) if values else None


def in_group(category: int, group: str) -> bool:
    if group == "all":
        return True
    if group == "1-4":
        return category in _HEADLINE
    return str(category) == group


def aggregate(
    questions: Sequence[Mapping[str, Any]], ks: Iterable[int]
) -> dict[str, dict[str, float | None]]:
    """Mean recall per group and k: ``{group: {str(k): mean or None}}``.

    Each question is a mapping with ``category`` (int) and ``recall`` (``{str(k): float}``).
    """
    keys = [str(k) for k in ks]
    out: dict[str, dict[str, float | None]] = {}
    for group in GROUPS:
        members = [q for q in questions if in_group(int(q["category"]), group)]
        out[group] = {k: mean([q["recall"][k] for q in members]) for k in keys}
    return out


def counts(questions: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Questions per group."""
    return {g: sum(1 for q in questions if in_group(int(q["category"]), g)) for g in GROUPS}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation, or None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
