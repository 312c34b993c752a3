"""``linkmem entities ...``: inspect and fix the entities that link memories."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from linkmem.cli import render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import Agent, Json, Limit, Run, User, scope
from linkmem.entities.inspect import ORDERS

entities_app = typer.Typer(
    help="Inspect, merge and rename the entities that link memories.",
    no_args_is_help=True,
)
app.add_typer(entities_app, name="entities")

Order = Enum("Order", {name: name for name in ORDERS}, type=str)  # the library's orders
Entity = Annotated[str, typer.Argument(help="Entity name (case-insensitive) or id.")]


@entities_app.command("list")
def list_entities(
    ctx: typer.Context,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    order: Annotated[
        Order, typer.Option(help="links: most linked first; text: A-Z; recent: newest first.")
    ] = Order.links,
    limit: Limit = 100,
    as_json: Json = False,
) -> None:
    """List a scope's entities with their kind and link count."""
    result = open_memory(ctx).entities(**scope(user, agent, run), order=order.value, limit=limit)
    render.emit(result, as_json, render.entities)


@entities_app.command("memories")
def entity_memories(
    ctx: typer.Context,
    entity: Entity,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Show the memories linked to an entity."""
    result = open_memory(ctx).entity_memories(entity, **scope(user, agent, run))
    render.emit(result, as_json, render.entity_memories)


@entities_app.command("related")
def related_entities(
    ctx: typer.Context,
    entity: Entity,
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    limit: Limit = 20,
    as_json: Json = False,
) -> None:
    """Show the entities that share memories with an entity.

    Most shared first.
    """
    result = open_memory(ctx).related_entities(entity, **scope(user, agent, run), limit=limit)
    render.emit(result, as_json, render.related)


@entities_app.command("merge")
def merge_entities(
    ctx: typer.Context,
    keep: Annotated[str, typer.Argument(help="Entity (name or id) that stays.")],
    drop: Annotated[str, typer.Argument(help="Entity (name or id) merged into KEEP.")],
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Move every link of DROP to KEEP, then delete DROP."""
    result = open_memory(ctx).merge_entities(keep, drop, **scope(user, agent, run))
    render.emit(result, as_json, lambda r: render.entities(r, title="Merged into"))


@entities_app.command("rename")
def rename_entity(
    ctx: typer.Context,
    entity: Entity,
    new_name: Annotated[str, typer.Argument(help="The new name.")],
    user: User = None,
    agent: Agent = None,
    run: Run = None,
    as_json: Json = False,
) -> None:
    """Rename an entity.

    If another entity of the scope already has the new name, the two are merged.
    """
    result = open_memory(ctx).rename_entity(entity, new_name, **scope(user, agent, run))
    render.emit(result, as_json, lambda r: render.entities(r, title="Renamed"))


@entities_app.command("of")
def memory_entities(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory id.")],
    as_json: Json = False,
) -> None:
    """Show the entities linked to one memory."""
    result = open_memory(ctx).memory_entities(memory_id)
    render.emit(result, as_json, render.entities)
