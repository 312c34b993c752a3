"""Rendering results: JSON for scripts, rich tables for people. Nothing here calls the library."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

Row = dict[str, Any]


def console() -> Console:
    """A console on the current stdout (tests swap it), soft-wrapping long text."""
    return Console(highlight=False)


def emit(result: Any, as_json: bool, human: Callable[[Any], None]) -> None:
    """Print ``result`` as JSON, or hand it to ``human`` to draw."""
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        human(result)


def scope_label(row: Row) -> str:
    parts = [f"{k[:-3]}={row[k]}" for k in ("user_id", "agent_id", "run_id") if row.get(k)]
    return " ".join(parts)


def _meta(row: Row) -> str:
    meta = row.get("metadata") or {}
    return json.dumps(meta, ensure_ascii=False) if meta else ""


def _table(title: str | None, columns: Iterable[tuple[str, dict[str, Any]]]) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold", expand=False)
    for name, style in columns:
        table.add_column(name, **style)
    return table


def _print(table: Table, rows: list[Row], empty: str) -> None:
    out = console()
    if rows:
        out.print(table)
    else:
        out.print(f"[dim]{empty}[/dim]")


# memories --------------------------------------------------------------------------------------
def memories(result: Row, title: str | None = None, empty: str = "No memories.") -> None:
    """One block per memory (ids are long; a table would squeeze the text)."""
    rows = result["results"]
    out = console()
    if title:
        out.print(f"[bold]{escape(title)}[/bold]")
    if not rows:
        out.print(f"[dim]{empty}[/dim]")
    for r in rows:
        when = r["created_at"][:16].replace("T", " ")
        back = "  [yellow]refers back[/yellow]" if r.get("link") == "inherited" else ""
        out.print(f"[cyan]{r['id']}[/cyan]  [dim]{when}  {scope_label(r)}[/dim]{back}")
        out.print(Padding(Text(r["memory"]), (0, 0, 0, 2), expand=False))
        if r.get("metadata"):
            out.print(Padding(Text(_meta(r), style="dim"), (0, 0, 0, 2), expand=False))


def events(result: Row) -> None:
    """ADD / UPDATE / DELETE results of a write."""
    rows = result["results"]
    out = console()
    for r in rows:
        text = r.get("memory")
        out.print(
            f"[green]{r['event']}[/green] [cyan]{r['id']}[/cyan]"
            + (f"  {escape(text)}" if text else "")
        )
    if not rows:
        out.print("[dim]Nothing changed.[/dim]")


def record(row: Row) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in row.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value)
        table.add_row(key, Text(shown))
    console().print(table)


def hits(result: Row, explain: bool = False, title: str | None = None) -> None:
    rows = result["results"]
    columns = [
        ("#", {"justify": "right", "style": "dim"}),
        ("score", {"justify": "right", "style": "bold"}),
    ]
    if explain:
        columns += [
            ("dense", {"justify": "right"}),
            ("bm25", {"justify": "right"}),
            ("boost", {"justify": "right"}),
            ("entity", {"style": "magenta"}),
        ]
    hopped = explain and any(r.get("score_details", {}).get("hop_entity") for r in rows)
    if hopped:
        columns += [("hop", {"justify": "right"}), ("via", {"style": "magenta"})]
    timed = explain and any(r.get("score_details", {}).get("time_boost") for r in rows)
    if timed:
        columns.append(("time", {"justify": "right"}))
    columns.append(("memory", {}))
    if not explain:  # with the score columns there is no room for ids; --json has them
        columns.append(("id", {"style": "cyan", "no_wrap": True}))
    table = _table(title, columns)
    for i, r in enumerate(rows, 1):
        cells = [str(i), f"{r['score']:.3f}"]
        if explain:
            d = r.get("score_details", {})
            cells += [
                f"{d.get('dense', 0):.3f}",
                f"{d.get('bm25', 0):.3f}",
                _boost(d.get("entity_boost", 0)),
                d.get("entity") or "",
            ]
            if hopped:
                cells += [_boost(d.get("hop_boost", 0)), d.get("hop_entity") or ""]
            if timed:
                cells.append(_boost(d.get("time_boost", 0)))
        cells.append(Text(r["memory"]))
        if not explain:
            cells.append(r["id"])
        table.add_row(*cells)
    _print(table, rows, "No matching memories.")


def _boost(value: float) -> str:
    return f"+{value:.3f}" if value else "·"


def history(result: Row) -> None:
    rows = result["results"]
    table = _table(
        None, [("when", {"style": "dim", "no_wrap": True}), ("event", {}), ("old", {}), ("new", {})]
    )
    for r in rows:
        table.add_row(
            r["created_at"][:19],
            r["event"],
            Text(r["old_memory"] or ""),
            Text(r["new_memory"] or ""),
        )
    _print(table, rows, "No history.")


# entities --------------------------------------------------------------------------------------
def entities(result: Row, title: str | None = None) -> None:
    rows = result["results"]
    shared = any("shared_memories" in r for r in rows)
    columns = [
        ("entity", {"style": "magenta"}),
        ("kind", {"style": "dim"}),
        ("links", {"justify": "right"}),
    ]
    if shared:
        columns.append(("shared", {"justify": "right", "style": "bold"}))
    columns += [("scope", {"style": "dim"}), ("id", {"style": "cyan dim", "no_wrap": True})]
    table = _table(title, columns)
    for r in rows:
        name = r["entity"] + (" (referred back to)" if r.get("link") == "inherited" else "")
        cells = [Text(name), r["kind"], str(r["link_count"])]
        if shared:
            cells.append(str(r["shared_memories"]))
        table.add_row(*cells, scope_label(r), r["id"])
    _print(table, rows, "No entities.")


def entity_memories(result: Row) -> None:
    e = result["entity"]
    memories(result, title=f"Memories linked to {e['entity']} ({e['kind']})")


def related(result: Row) -> None:
    entities(result, title=f"Entities sharing memories with {escape(result['entity']['entity'])}")


def import_report(report: Row) -> None:
    out = console()
    rate = report["memories_per_second"]
    out.print(
        f"[green]Imported[/green] {report['memories']:,} memories from {report['records']:,} "
        f"records in {report['batches']} batches, {report['seconds']:.2f} s"
        + (f" ({rate:,.0f} memories/s)" if rate else "")
    )
    if report.get("skipped"):
        out.print(f"Skipped {report['skipped']:,} texts already stored in their scope.")
    for s in report["scopes"]:
        out.print(f"  {scope_label(s)}: {s['memories']:,}")


def check_report(report: Row, repair: bool) -> None:
    """``store is consistent``, or one line per kind of problem and what to do about it."""
    out = console()
    done = "Repaired: " if report["repaired"] else ""
    if report["ok"]:
        out.print(f"[green]{done}store is consistent[/green]")
        return
    for problem in report["problems"]:
        out.print(
            f"[red]{escape(problem['kind'])}[/red]: {problem['count']:,} ",
            Text(problem["detail"]),
            sep="",
        )
    if report["repaired"]:
        out.print("Repaired the rest; these remain, as they cannot be rebuilt from the texts.")
    elif not repair:
        out.print("Run [bold]linkmem check --repair[/bold] to rebuild what can be rebuilt.")


def transfer_report(report: Row, verb: str, preposition: str) -> None:
    """``Exported ... to FILE`` / ``Restored ... from FILE``."""
    counts = ", ".join(
        f"{report[k]:,} {label}"
        for k, label in [
            ("memories", "memories"),
            ("entities", "entities"),
            ("links", "links"),
            ("history", "history events"),
        ]
    )
    console().print(
        f"[green]{verb}[/green] {counts} {preposition} ",
        Text(str(report["path"])),
        f" in {report['seconds']:.2f} s",
        sep="",
        soft_wrap=True,
    )


def _plain(value: Any) -> str:
    """A detail value for people: lists and mappings without Python brackets."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_plain(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value) or "none"
    return "none" if value is None else str(value)


def doctor(report: Row) -> None:
    out = console()
    status = report["status"]
    if status:
        store = dict(status["store"])
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column(style="bold")
        table.add_column()
        where = f"{store.pop('backend')}  {store.pop('location')}"
        table.add_row("store", Text(where, overflow="fold"))
        counts = {
            k: store.pop(k) for k in ("memories", "entities", "links", "scopes") if k in store
        }
        table.add_row("counts", "  ".join(f"{k} {v:,}" for k, v in counts.items()))
        for key, value in store.items():  # backend details: versions, index state, ...
            table.add_row(key.replace("_", " "), Text(_plain(value)))
        embedder = status["embedder"]
        table.add_row("embedder", Text(f"{embedder['model']} ({embedder['dim']} dims)"))
        table.add_row("entities", Text(str(status["entities"])))
        if "llm" in status:
            table.add_row("llm", Text(str(status["llm"])))
        out.print(table)
        out.print()
    for check in report["checks"]:
        mark = "[green]OK  [/green]" if check["ok"] else "[red]FAIL[/red]"
        out.print(f"{mark} {check['name']}: ", Text(check["detail"]), sep="")
