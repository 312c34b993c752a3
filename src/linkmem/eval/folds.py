"""Leave-one-conversation-out folds: a tuning discipline that cannot overfit one split.

Each conversation is held out once. With the retrieval constants fixed, a fold's held-out
score is its conversation's recall; the report gives every fold, the mean over folds and the
worst fold, so a default is justified by its worst fold, not by a pooled mean that one large
conversation dominates.

Per-fold tuning (``tune_folds``) picks a constant's value on the other conversations (the
training folds) and scores it on the held-out one: when the chosen value moves from fold to
fold, or the held-out recall at the chosen value falls below the default's, the constant is
fitted to noise. Everything here is pure: scored questions in (as ``run_locomo`` keeps them),
numbers out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from linkmem.eval.metrics import in_group, mean

Questions = Sequence[Mapping[str, Any]]


def fold_ids(questions: Questions) -> list[str]:
    """The conversations (folds), in first-seen order."""
    return list(dict.fromkeys(str(q["sample_id"]) for q in questions))


def group_recall(questions: Questions, group: str, k: int) -> float | None:
    """Mean recall@k over the questions of a group (None when it has none)."""
    return mean([q["recall"][str(k)] for q in questions if in_group(int(q["category"]), group)])


def held_out_recall(questions: Questions, fold: str, group: str, k: int) -> float | None:
    return group_recall([q for q in questions if q["sample_id"] == fold], group, k)


def training_recall(questions: Questions, fold: str, group: str, k: int) -> float | None:
    """Recall over every conversation but ``fold`` (its questions pooled)."""
    return group_recall([q for q in questions if q["sample_id"] != fold], group, k)


def spread(values: Mapping[str, float | None]) -> dict[str, Any]:
    """Mean over folds (each fold counts once), the worst fold and its name."""
    present = {fold: v for fold, v in values.items() if v is not None}
    if not present:
        return {"mean": None, "worst": None, "worst_fold": None}
    worst_fold = min(present, key=present.__getitem__)
    return {
        "mean": mean(list(present.values())),
        "worst": present[worst_fold],
        "worst_fold": worst_fold,
    }


def fold_table(
    ablations: Mapping[str, Questions], groups: Iterable[str], ks: Iterable[int]
) -> dict[str, Any]:
    """Held-out recall per fold, ablation, group and k, with the spread over folds.

    ``ablations`` maps a name to its scored questions. Returns ``{"folds": [...],
    "recall": {ablation: {group: {k: {fold: recall}}}}, "spread": {ablation: {group: {k:
    spread}}}}`` (k as a string, as in the rest of the result).
    """
    folds = fold_ids(next(iter(ablations.values()), []))
    recall: dict[str, Any] = {}
    summary: dict[str, Any] = {}
    for name, questions in ablations.items():
        recall[name], summary[name] = {}, {}
        for group in groups:
            recall[name][group], summary[name][group] = {}, {}
            for k in ks:
                per_fold = {f: held_out_recall(questions, f, group, k) for f in folds}
                recall[name][group][str(k)] = per_fold
                summary[name][group][str(k)] = spread(per_fold)
    return {"folds": folds, "recall": recall, "spread": summary}


def margins(
    table: Mapping[str, Any], better: str, baseline: str, group: str, k: int
) -> dict[str, Any]:
    """``better`` minus ``baseline`` per fold (held out), and the spread of that margin."""
    a = table["recall"][better][group][str(k)]
    b = table["recall"][baseline][group][str(k)]
    per_fold = {f: None if a[f] is None or b[f] is None else a[f] - b[f] for f in table["folds"]}
    return {"per_fold": per_fold, **spread(per_fold)}


def choose(
    grid: Mapping[float, Questions], fold: str, group: str, k: int, default: float
) -> tuple[float, float | None]:
    """The value with the best training recall for ``fold`` (a tie keeps the default, then the
    value nearest to it), and that training recall."""
    scored = {value: training_recall(qs, fold, group, k) for value, qs in grid.items()}
    best = max((r for r in scored.values() if r is not None), default=None)
    if best is None:
        return default, None
    tied = [v for v, r in scored.items() if r is not None and r >= best - 1e-12]
    return min(tied, key=lambda v: abs(v - default)), best


def tune_folds(
    grid: Mapping[float, Questions], default: float, group: str = "1-4", k: int = 10
) -> dict[str, Any]:
    """Per fold: the value chosen on the training folds, the held-out recall at it and at the
    default. ``grid`` maps each tried value (the default among them) to its scored questions.
    ``stable`` is true when every fold chose the same value."""
    if default not in grid:
        raise ValueError(f"the grid {sorted(grid)} must contain the default {default}")
    folds = fold_ids(grid[default])
    per_fold: dict[str, dict[str, Any]] = {}
    for fold in folds:
        value, train = choose(grid, fold, group, k, default)
        per_fold[fold] = {
            "chosen": value,
            "training": train,
            "held_out": held_out_recall(grid[value], fold, group, k),
            "held_out_default": held_out_recall(grid[default], fold, group, k),
        }
    chosen = [f["chosen"] for f in per_fold.values()]
    return {
        "group": group,
        "k": k,
        "default": default,
        "values": sorted(grid),
        "folds": per_fold,
        "stable": len(set(chosen)) == 1,
        "held_out": spread({f: d["held_out"] for f, d in per_fold.items()}),
        "held_out_default": spread({f: d["held_out_default"] for f, d in per_fold.items()}),
        "all_values": {
            str(v): spread({f: held_out_recall(qs, f, group, k) for f in folds})
            for v, qs in sorted(grid.items())
        },
    }
