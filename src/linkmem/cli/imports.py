"""``linkmem import``: validate a whole file, then write it in batches with a progress bar."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from linkmem.cli import importer, render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import Agent, Json, Run, User, scope
from linkmem.errors import LinkmemError
from linkmem.transfer import export_header
from linkmem.types import SCOPE_KEYS


@dataclass
class ImportReport:
    records: int
    memories: int = 0
    batches: int = 0
    started: float = field(default_factory=time.perf_counter)
    per_scope: dict[importer.ScopeKey, int] = field(default_factory=dict)

    def add(self, batch: importer.Batch, memories: int) -> None:
        self.memories += memories
        self.batches += 1
        self.per_scope[batch.scope] = self.per_scope.get(batch.scope, 0) + memories

    def finish(self) -> dict[str, Any]:
        seconds = time.perf_counter() - self.started
        return {
            "records": self.records,
            "memories": self.memories,
            "batches": self.batches,
            "seconds": round(seconds, 3),
            "memories_per_second": round(self.memories / seconds, 1) if seconds else None,
            "scopes": [
                {**{k: v for k, v in zip(SCOPE_KEYS, key) if v is not None}, "memories": n}
                for key, n in self.per_scope.items()
            ],
        }


@contextmanager
def import_progress(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on a terminal; nothing when disabled or piped."""
    progress = Progress(
        TextColumn("[bold]Importing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=render.console(),
        transient=True,
        disable=not enabled or not render.console().is_terminal,
    )
    started = time.perf_counter()
    with progress:
        task = progress.add_task("import", total=total, rate="")

        def advance(n: int) -> None:
            done = progress.tasks[0].completed + n
            rate = done / max(time.perf_counter() - started, 1e-9)
            progress.update(task, advance=n, rate=f"{rate:,.0f} items/s")

        yield advance


@contextmanager
def _stop_note(batch: importer.Batch, report: ImportReport) -> Iterator[None]:
    """When a batch fails, say what was kept before the error is reported."""
    try:
        yield
    except LinkmemError:
        typer.echo(
            f"Import stopped at {batch.span}: that batch was not written; "
            f"{report.memories} memories from {report.batches} earlier batches were kept.",
            err=True,
        )
        raise


@app.command("import")
def import_file(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(
            help="A JSONL file, or a conversation as JSON.", exists=True, dir_okay=False
        ),
    ],
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size",
            min=1,
            help="Items per add_batch call, or export rows per transaction when restoring.",
        ),
    ] = 256,
    as_json: Json = False,
) -> None:
    """Import memories from a JSONL file or a conversation JSON, or restore an export.

    Every record is checked first: a bad line is reported with its number and nothing is
    written.

    A file written by `linkmem export` is restored losslessly: same ids, scopes, timestamps,
    vectors, entities, links and history (into a collection holding none of those ids, with
    the embedder the export was made with).

    JSONL: one object per line with "text" or "messages", optional "metadata", and optional
    "user_id" / "agent_id" / "run_id" that override the command line's scope.
    Conversation JSON: a list of {"role", "content"} messages, or {"messages": [...]}.
    """
    header = export_header(path)
    if header is not None:
        _restore(ctx, path, header, (user, agent, run), batch_size, as_json)
        return
    memory = open_memory(ctx)
    ids = scope(user, agent, run)
    total = importer.check_records(importer.read_records(path, ids), memory.settings.max_text_chars)
    report = ImportReport(records=total)
    with import_progress(total, enabled=not as_json) as advance:
        for batch in importer.batches(importer.read_records(path, ids), batch_size):
            with _stop_note(batch, report):
                result = memory.add_batch(batch.items, **batch.kwargs())
            report.add(batch, len(result["results"]))
            advance(len(batch.records))
    render.emit(report.finish(), as_json, render.import_report)


def _restore(
    ctx: typer.Context,
    path: Path,
    header: dict[str, Any],
    scope_ids: tuple[str | None, ...],
    batch_size: int,
    as_json: bool,
) -> None:
    if any(i is not None for i in scope_ids):
        raise typer.BadParameter(
            "an export keeps every memory's own scope; drop --user, --agent and --run",
            param_hint="--user / --agent / --run",
        )
    counts = header.get("counts")
    total = 1 + sum(counts.values()) if isinstance(counts, dict) else 0
    memory = open_memory(ctx)
    with import_progress(total, enabled=not as_json and total > 0) as advance:
        result = memory.restore(path, batch_size=batch_size, progress=advance)
    render.emit(result, as_json, lambda r: render.transfer_report(r, "Restored", "from"))
