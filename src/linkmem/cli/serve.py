"""``linkmem serve``: the REST server (``linkmem.server``) on this machine's store."""

from __future__ import annotations

from typing import Annotated

import typer

from linkmem.cli.app import app, global_options, open_local_memory
from linkmem.config import resolve_settings


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on (default 8765).")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes, each with its own Memory (default 1).")
    ] = None,
) -> None:
    """Serve this memory over HTTP: a REST API for agents.

    Without API keys it listens on loopback only; create keys with `linkmem keys create`.
    """
    from linkmem.server import serve as run_server  # FastAPI loads only for this command

    opts = global_options(ctx)
    overrides = {**opts.overrides(), **({"sqlite.path": str(opts.db)} if opts.db else {})}
    settings = resolve_settings(overrides, config_file=opts.config).server
    run_server(
        lambda: open_local_memory(ctx),
        host=host or settings.host,
        port=port or settings.port,
        workers=workers or settings.workers,
        settings={**overrides, **({"config_file": str(opts.config)} if opts.config else {})},
        announce=lambda line: typer.echo(f"linkmem: {line}", err=True),
    )
