"""``/v1/memories``: add, search, list, get, update, delete, history. Each route is one
``Memory`` call through the caller's view (``linkmem.access``)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query

from linkmem.errors import InvalidInput
from linkmem.server.deps import Mem, QueryScope, Who
from linkmem.server.schemas import AddBatchBody, AddBody, SearchBody, UpdateBody

router = APIRouter(prefix="/v1/memories", tags=["memories"])
Result = dict[str, Any]


def parse_filters(text: str | None) -> dict[str, Any] | None:
    """The ``filters`` query parameter: a JSON object."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"filters is not valid JSON ({e.msg}); pass a JSON object") from e
    except (RecursionError, ValueError) as e:  # nested too deep, an integer too long
        raise InvalidInput(
            "filters could not be read: it is nested too deeply or holds an integer with "
            "too many digits; pass a small JSON object"
        ) from e
    if not isinstance(value, dict):
        raise InvalidInput('filters must be a JSON object, e.g. {"topic": "pets"}')
    return value


@router.post("", summary="Add a text, a message or a list of messages")
def add(body: AddBody, memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "write").add(
        body.messages,
        **body.scope(),
        metadata=body.metadata,
        infer=body.infer,
        timestamp=body.timestamp,
    )


@router.post("/batch", summary="Add many items in one scope, with metadata per item")
def add_batch(body: AddBatchBody, memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "write").add_batch(
        body.items,
        **body.scope(),
        metadata=body.metadata,
        infer=body.infer,
        timestamp=body.timestamp,
    )


@router.post("/search", summary="Hybrid search in a scope")
def search(body: SearchBody, memory: Mem, caller: Who) -> Result:
    return caller.view(memory).search(
        body.query,
        **body.scope(),
        filters=body.filters,
        top_k=body.top_k,
        threshold=body.threshold,
        explain=body.explain,
        signals=body.signals,
    )


@router.get("", summary="A scope's memories, newest first")
def get_all(
    memory: Mem,
    caller: Who,
    scope: QueryScope,
    filters: Annotated[str | None, Query(description="A JSON object")] = None,
    limit: int = 100,
    offset: int = 0,
) -> Result:
    return caller.view(memory).get_all(
        **scope, filters=parse_filters(filters), limit=limit, offset=offset
    )


@router.delete("", summary="Delete every memory of a scope")
def delete_all(memory: Mem, caller: Who, scope: QueryScope, across_users: bool = False) -> Result:
    return caller.view(memory, "write").delete_all(**scope, across_users=across_users)


@router.get("/count", summary="How many memories a scope holds")
def count(memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return {"count": caller.view(memory).count(**scope)}


@router.get("/{memory_id}", summary="One memory")
def get(memory_id: str, memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return caller.view(memory).get(memory_id, **scope)


@router.patch("/{memory_id}", summary="Change a memory's text and/or merge metadata")
def update(memory_id: str, body: UpdateBody, memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "write").update(memory_id, body.text, body.metadata, **body.scope())


@router.delete("/{memory_id}", summary="Delete one memory")
def delete(memory_id: str, memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return caller.view(memory, "write").delete(memory_id, **scope)


@router.get("/{memory_id}/history", summary="ADD / UPDATE / DELETE events, oldest first")
def history(memory_id: str, memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return caller.view(memory).history(memory_id, **scope)


@router.get("/{memory_id}/entities", summary="The entities linked to a memory")
def memory_entities(memory_id: str, memory: Mem, caller: Who, scope: QueryScope) -> Result:
    return caller.view(memory).memory_entities(memory_id, **scope)
