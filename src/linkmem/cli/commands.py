"""The memory commands: each builds ``Memory``, makes one library call and renders it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from linkmem import validation
from linkmem.cli import render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import (
    Agent,
    Filters,
    Json,
    Limit,
    Metadata,
    Run,
    User,
    Yes,
    confirm,
    ensure_confirmable,
    parse_json,
    scope,
)
from linkmem.memory import Memory

if TYPE_CHECKING:
    from linkmem.client.remote import RemoteMemory


def _where(memory: Memory | RemoteMemory) -> str:
    if not isinstance(memory, Memory):
        return f"the server at {memory.settings.url}"
    settings = memory.settings
    place = settings.sqlite_path if settings.store == "sqlite" else f"the {settings.store} store"
    return f"collection {settings.collection!r} of {place}"


MemoryId = Annotated[str, typer.Argument(help="The memory id (from add, list or search).")]


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The text to remember.")],
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    metadata: Metadata = None,
    role: Annotated[str, typer.Option(help="Who said it: user, assistant, tool, ...")] = "user",
    infer: Annotated[
        bool,
        typer.Option(
            "--infer",
            help="Let the LLM ([llm] settings) turn the text into facts and update or delete "
            "existing memories, instead of storing the text as it is.",
        ),
    ] = False,
    timestamp: Annotated[
        str | None,
        typer.Option(help="When it was said: an ISO-8601 date or time (default: now)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """Remember one text.

    The scope needs at least one of --user, --agent and --run. With --infer an LLM
    extracts facts and reconciles them with the scope's memories (ADD, UPDATE, DELETE).
    """
    meta = parse_json(metadata, "--metadata")
    message = text if role == "user" else {"role": role, "content": text}
    result = open_memory(ctx, embeds=True).add(
        message, **scope(user, agent, run), metadata=meta, infer=infer, timestamp=timestamp
    )
    render.emit(result, as_json, render.events)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="Results to return.")] = 10,
    threshold: Annotated[
        float | None, typer.Option(help="Drop results scoring below this (0..1).")
    ] = None,
    filters: Filters = None,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show the score parts: dense, bm25, entity boost, entity."),
    ] = False,
    as_json: Json = False,
) -> None:
    """Search a scope by meaning, keywords and entity links."""
    result = open_memory(ctx, embeds=True, extracts=False).search(
        query,
        **scope(user, agent, run),
        filters=parse_json(filters, "--filters"),
        top_k=top_k,
        threshold=threshold,
        explain=explain,
    )
    render.emit(result, as_json, lambda r: render.hits(r, explain))


@app.command("list")
def list_memories(
    ctx: typer.Context,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    filters: Filters = None,
    limit: Limit = 100,
    offset: Annotated[int, typer.Option(min=0, help="Rows to skip (for paging).")] = 0,
    as_json: Json = False,
) -> None:
    """List a scope's memories, newest first."""
    result = open_memory(ctx).get_all(
        **scope(user, agent, run),
        filters=parse_json(filters, "--filters"),
        limit=limit,
        offset=offset,
    )
    render.emit(result, as_json, render.memories)


@app.command()
def get(
    ctx: typer.Context,
    memory_id: MemoryId,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Show one memory by id.

    With --user, --agent or --run, the memory must be in that scope.
    """
    result = open_memory(ctx).get(memory_id, **scope(user, agent, run))
    render.emit(result, as_json, render.record)


@app.command()
def update(
    ctx: typer.Context,
    memory_id: MemoryId,
    text: Annotated[str | None, typer.Option("--text", "-t", help="The new text.")] = None,
    metadata: Annotated[
        str | None, typer.Option("--metadata", "-m", help="JSON object merged into metadata.")
    ] = None,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Change a memory's text and/or metadata.

    New text is re-embedded and re-linked; --metadata is merged into the old metadata.
    """
    result = open_memory(ctx).update(
        memory_id, text, parse_json(metadata, "--metadata"), **scope(user, agent, run)
    )
    render.emit(result, as_json, render.events)


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: MemoryId,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Delete one memory (its history is kept)."""
    result = open_memory(ctx).delete(memory_id, **scope(user, agent, run))
    render.emit(result, as_json, render.events)


@app.command("delete-all")
def delete_all(
    ctx: typer.Context,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    yes: Yes = False,
    as_json: Json = False,
) -> None:
    """Delete every memory of a scope (--user, --agent or --run)."""
    ids = scope(user, agent, run)
    chosen = validation.make_scope(**ids)  # fail on a missing scope before asking
    confirm(yes, f"Delete every memory of {render.scope_label(chosen.as_dict())}?")
    result = open_memory(ctx).delete_all(**ids)
    render.emit(result, as_json, render.events)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: MemoryId,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Show a memory's ADD / UPDATE / DELETE events, oldest first.

    With --user, --agent or --run, a memory that still exists must be in that scope.
    """
    result = open_memory(ctx).history(memory_id, **scope(user, agent, run))
    render.emit(result, as_json, render.history)


@app.command()
def reset(
    ctx: typer.Context,
    yes: Yes = False,
    as_json: Json = False,
) -> None:
    """Delete everything in the collection.

    That is every memory, entity, link and history event, in every scope.
    """
    ensure_confirmable(yes)  # before opening, so a refused reset creates nothing
    memory = open_memory(ctx)
    confirm(yes, f"Delete everything in {_where(memory)}?")
    memory.reset()
    render.emit(
        {"reset": True},
        as_json,
        lambda _: render.console().print("[green]Reset:[/green] the collection is empty."),
    )
