"""``linkmem export``: the whole collection to a JSONL file that ``linkmem import`` restores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from linkmem.cli import render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import Json


@app.command()
def export(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(help="File to write: JSONL, gzipped when it ends in .gz.", dir_okay=False),
    ],
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Rows per database read.")
    ] = 1000,
    as_json: Json = False,
) -> None:
    """Export the whole collection to a JSONL file.

    That is every memory with its vector, every entity, link and history event.

    `linkmem import FILE` restores it losslessly (same ids, timestamps and vectors) into
    any store, e.g. from SQLite to PostgreSQL: `linkmem --store postgres import FILE`.
    """
    result = open_memory(ctx).export(path, batch_size=batch_size)
    render.emit(result, as_json, lambda r: render.transfer_report(r, "Exported", "to"))
