"""Show a LoCoMo result as rich tables (one per k: ablation x category) and save it as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from linkmem.eval.locomo import CATEGORIES
from linkmem.eval.metrics import GROUPS


def write_json(result: Mapping[str, Any], path: str | Path) -> Path:
    """Write ``result`` as indented JSON (parent folders are created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return target


def legend() -> str:
    names = " · ".join(f"{cid} {name}" for cid, name in CATEGORIES.items())
    return f"categories: {names}; 1-4 is the headline"


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def recall_table(result: Mapping[str, Any], k: int) -> Table:
    """Rows: ablations; columns: categories 1-5, 1-4 and all; cells: mean recall@k."""
    ablations: Mapping[str, Any] = result["ablations"]
    first = next(iter(ablations.values()))
    table = Table(title=f"LoCoMo recall@{k}", title_justify="left")
    table.add_column("ablation", no_wrap=True)
    for group in GROUPS:
        style = "bold" if group == "1-4" else None
        header = f"{group}\n(n={first['counts'][group]})"
        table.add_column(header, justify="right", style=style, no_wrap=True)
    for name, data in ablations.items():
        table.add_row(name, *(_cell(data["recall"][group][str(k)]) for group in GROUPS))
    return table


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def timing_table(result: Mapping[str, Any]) -> Table:
    """Add timings, then search latency per ablation."""
    timing = result["timing"]
    setup = result["setup"]
    table = Table(title="Timing", title_justify="left")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("memories added", str(setup["memories"]))
    table.add_row("add total (s)", f"{timing['add_seconds']:.1f}")
    table.add_row("add per memory (ms)", _ms(timing["add_ms_per_memory"]))
    table.add_row("adds per second", _ms(timing["adds_per_second"]))
    for name, data in result["ablations"].items():
        lat = data["search_ms"]
        table.add_row(f"search {name} p50 / p95 (ms)", f"{_ms(lat['p50'])} / {_ms(lat['p95'])}")
    table.add_row("models load (s)", f"{timing['load_seconds']:.1f}")
    table.add_row("wall time (s)", f"{timing['wall_seconds']:.1f}")
    return table


def print_report(result: Mapping[str, Any], console: Console | None = None) -> None:
    """Print the setup line, one recall table per k and the timing table."""
    console = console or Console()
    setup = result["setup"]
    console.print(
        f"LoCoMo {result['data']}: {len(setup['conversations'])} conversations, "
        f"{setup['memories']} memories, {setup['questions_scored']} questions scored "
        f"({setup['questions_without_evidence']} without evidence left out); "
        f"embedder {setup['embedder']}, entities {setup['entities']}"
    )
    if setup.get("audit"):
        audit = setup["audit"]
        console.print(
            f"Evidence of {audit['questions_corrected']} questions as corrected by the audit "
            f"{audit['path']}"
        )
    console.print(legend())
    for k in result["ks"]:
        console.print(recall_table(result, k))
    console.print(timing_table(result))


def _fold_rows(result: Mapping[str, Any], group: str, ks: Sequence[int]) -> list[list[str]]:
    """One row per held-out fold, then the mean and the worst fold; columns ablation x k."""
    table = result["folds"]
    names = list(table["recall"])
    rows = []
    for fold in table["folds"]:
        rows.append(
            [fold, *(_cell(table["recall"][n][group][str(k)][fold]) for n in names for k in ks)]
        )
    for label in ("mean", "worst"):
        rows.append(
            [label, *(_cell(table["spread"][n][group][str(k)][label]) for n in names for k in ks)]
        )
    return rows


def _fold_header(result: Mapping[str, Any], ks: Sequence[int]) -> list[str]:
    return ["held out", *(f"{n} @{k}" for n in result["folds"]["recall"] for k in ks)]


def fold_tables(result: Mapping[str, Any], ks: Sequence[int] | None = None) -> list[Table]:
    """One table per fold group: the held-out recall of each fold, the mean and the worst."""
    ks = list(ks or [k for k in result["ks"] if k in (10, 25)] or result["ks"])
    tables = []
    for group in result["folds"]["recall"]["full"]:
        name = CATEGORIES.get(int(group), "") if group.isdigit() else "categories 1-4"
        table = Table(title=f"Leave one conversation out: {group} {name}", title_justify="left")
        for header in _fold_header(result, ks):
            table.add_column(header, justify="right", no_wrap=True)
        for row in _fold_rows(result, group, ks):
            table.add_row(*row)
        tables.append(table)
    return tables


def tuning_table(result: Mapping[str, Any]) -> Table:
    """Per constant and fold: the value chosen on the other folds and its held-out recall."""
    table = Table(title="Per-fold tuning (chosen on the other folds)", title_justify="left")
    for header in ("constant", "held out", "chosen", "held-out recall", "at default"):
        table.add_column(header, justify="right", no_wrap=True)
    for constant, tuned in result.get("tuning", {}).items():
        for fold, data in tuned["folds"].items():
            table.add_row(
                constant,
                fold,
                f"{data['chosen']:g}",
                _cell(data["held_out"]),
                _cell(data["held_out_default"]),
            )
        table.add_row(
            constant,
            "mean / worst",
            "stable" if tuned["stable"] else "moves",
            f"{_cell(tuned['held_out']['mean'])} / {_cell(tuned['held_out']['worst'])}",
            f"{_cell(tuned['held_out_default']['mean'])} / "
            f"{_cell(tuned['held_out_default']['worst'])}",
        )
    return table


def folds_markdown(result: Mapping[str, Any], group: str, ks: Sequence[int]) -> str:
    """The fold table of one group as a Markdown table (for benchmarks/README.md)."""
    header = _fold_header(result, ks)
    lines = [
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for row in _fold_rows(result, group, ks):
        if row[0] in ("mean", "worst"):
            row = [f"**{row[0]}**", *row[1:]]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def print_folds(result: Mapping[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    for table in fold_tables(result):
        console.print(table)
    if result.get("tuning"):
        console.print(tuning_table(result))
