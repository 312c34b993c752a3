"""``/v1/entities``: list, memories of an entity, related, merge, rename. An entity is named
by its id or its name (``entity=`` in the query, or in the body)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from linkmem.server.deps import Mem, QueryScope, Who
from linkmem.server.schemas import MergeBody, RenameBody

router = APIRouter(prefix="/v1/entities", tags=["entities"])
Result = dict[str, Any]


@router.get("", summary="A scope's entities with kind and link count")
def entities(
    memory: Mem,
    caller: Who,
    scope: QueryScope,
    order: str = "links",
    limit: int = 100,
    offset: int = 0,
) -> Result:
    return caller.view(memory).entities(**scope, order=order, limit=limit, offset=offset)


@router.post("/merge", summary="Move every link of drop to keep, and delete drop")
def merge(body: MergeBody, memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "write").merge_entities(body.keep, body.drop, **body.scope())


@router.get("/memories", summary="The memories linked to an entity")
def entity_memories(entity: str, memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return caller.view(memory).entity_memories(entity, **scope)


@router.get("/related", summary="Entities that share memories with this one")
def related(entity: str, memory: Mem, caller: Who, scope: QueryScope, limit: int = 20) -> Result:
    return caller.view(memory).related_entities(entity, **scope, limit=limit)


@router.post("/rename", summary="Rename an entity (merging into a namesake)")
def rename(body: RenameBody, memory: Mem, caller: Who) -> Result:
    view = caller.view(memory, "write")
    return view.rename_entity(body.entity, body.new_name, **body.scope())
