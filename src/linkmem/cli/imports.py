"""``linkmem import``: a thin shell over ``linkmem.ingest`` with a progress bar."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from linkmem.cli import render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import Agent, Json, Run, User, scope
from linkmem.errors import LinkmemError
from linkmem.memory import Memory
from linkmem.transfer import export_header

if TYPE_CHECKING:  # imported by the command itself: other commands start without them
    from linkmem.ingest import FileImport

RESUME_HINT = "run the same command with --skip-existing to import the rest without duplicates"


@contextmanager
def import_progress(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on a terminal; nothing when disabled or piped."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

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
def _stop_note(job: FileImport) -> Iterator[None]:
    """When a batch fails or Ctrl-C stops the import, say what was kept and how to go on."""
    try:
        yield
    except LinkmemError:
        where = job.batch.span if job.batch else "the start"
        typer.echo(
            f"Import stopped at {where}: that batch was not written; "
            f"{job.report.kept()} were kept.",
            err=True,
        )
        raise
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            f"import interrupted after {job.report.kept()}, which were kept; {RESUME_HINT}"
        ) from None


@contextmanager
def _ctrl_c_between_batches() -> Iterator[Callable[[], None]]:
    """The first Ctrl-C stops the import once the batch being written is stored, so the
    count of kept memories is exact; a second one stops it at once. Yields the check to
    call between batches."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None  # signal handlers belong to the main thread
        return
    asked: list[bool] = []

    def handler(signum: int, frame: Any) -> None:
        asked.append(True)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def stop_if_asked() -> None:
        if asked:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop_if_asked
    finally:
        signal.signal(signal.SIGINT, previous)


@app.command("import")
def import_file(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(
            help="A JSONL file, or a conversation as JSON (either may be gzipped).",
            exists=True,
            dir_okay=False,
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
    skip_existing: Annotated[
        bool,
        typer.Option(
            "--skip-existing",
            help="Skip every text already stored in its scope (or earlier in the file), "
            "so an interrupted or repeated import can be run again.",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Import memories from JSONL or JSON, or restore an export.

    Every record is checked first: a bad line is reported with its number and nothing is
    written. Then records are written in batches, each in one transaction. Ctrl-C stops the
    import after the batch being written (twice: at once); run it again with --skip-existing
    to import the rest without duplicates.

    A file written by `linkmem export` is restored losslessly: same ids, scopes, timestamps,
    vectors, entities, links and history (into a collection holding none of those ids, with
    the embedder the export was made with).

    JSONL: one object per line with "text" or "messages", optional "metadata", and optional
    "user_id" / "agent_id" / "run_id" that override the command line's scope.
    Conversation JSON: a list of {"role", "content"} messages, or {"messages": [...]}.
    Gzipped files are recognised by their content, whatever their name.
    """
    header = export_header(path)
    if header is not None:
        _refuse_for_export(user, agent, run, skip_existing=skip_existing)
        _restore(ctx, path, header, batch_size, as_json)
        return
    from linkmem.ingest import FileImport

    memory = open_memory(ctx)
    if not isinstance(memory, Memory):  # a RemoteMemory: the server checks and writes it
        ids = scope(user, agent, run)
        report = memory.import_file(path, **ids, batch_size=batch_size, skip_existing=skip_existing)
        render.emit(report, as_json, render.import_report)
        return
    job = FileImport(
        memory,
        path,
        scope(user, agent, run),
        batch_size=batch_size,
        skip_existing=skip_existing,
    )
    total = job.check()
    with (
        import_progress(total, enabled=not as_json) as advance,
        _stop_note(job),
        _ctrl_c_between_batches() as stop_if_asked,
    ):

        def batch_done(records: int) -> None:
            advance(records)
            stop_if_asked()

        report = job.run(progress=batch_done)
    render.emit(report, as_json, render.import_report)


def _refuse_for_export(*scope_ids: str | None, skip_existing: bool) -> None:
    if any(i is not None for i in scope_ids):
        raise typer.BadParameter(
            "an export keeps every memory's own scope; drop --user, --agent and --run",
            param_hint="--user / --agent / --run",
        )
    if skip_existing:
        raise typer.BadParameter(
            "an export is restored whole, into a collection holding none of its ids; "
            "drop --skip-existing (or restore into another --collection)",
            param_hint="--skip-existing",
        )


def _restore(
    ctx: typer.Context, path: Path, header: dict[str, Any], batch_size: int, as_json: bool
) -> None:
    from linkmem.ingest import restore_file

    counts = header.get("counts")
    total = 1 + sum(counts.values()) if isinstance(counts, dict) else 0
    memory = open_memory(ctx)
    with import_progress(total, enabled=not as_json and total > 0) as advance:
        result = restore_file(memory, path, batch_size=batch_size, progress=advance)
    render.emit(result, as_json, lambda r: render.transfer_report(r, "Restored", "from"))
