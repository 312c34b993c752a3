"""Show a LoCoMo result as rich tables (one per k: ablation x category) and save it as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
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
    console.print(legend())
    for k in result["ks"]:
        console.print(recall_table(result, k))
    console.print(timing_table(result))
