"""Routes shaped like Mem0's self-hosted REST server, so its clients work unchanged (they send
an API key once keys exist). Each is one ``Memory`` call, scoped by the caller like ``/v1``.
``/configure`` is not offered: the server's configuration is not a request's to change."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import RedirectResponse

from linkmem.errors import InvalidInput, InvalidRequest
from linkmem.server.deps import Mem, QueryScope, Who
from linkmem.server.errors import error_response
from linkmem.server.schemas import AddBody, Mem0SearchBody
from linkmem.validation import shown

router = APIRouter(tags=["mem0-compatible"])
Result = dict[str, Any]


def _require_scope(scope: dict[str, str | None], caller_tenant: Any) -> None:
    if caller_tenant is None and not any(scope.values()):
        raise InvalidInput("at least one of user_id, agent_id or run_id is required")


@router.post("/memories", summary="Mem0: add memories")
def add(body: AddBody, memory: Mem, caller: Who) -> Result:
    _require_scope(body.scope(), caller.tenant)
    return caller.view(memory, "write").add(
        body.messages, **body.scope(), metadata=body.metadata, infer=body.infer
    )


@router.get("/memories", summary="Mem0: a scope's memories")
def get_all(memory: Mem, caller: Who, scope: QueryScope) -> Result:
    _require_scope(scope, caller.tenant)
    return caller.view(memory).get_all(**scope)


@router.get("/memories/{memory_id}", summary="Mem0: one memory")
def get(memory_id: str, memory: Mem, caller: Who) -> Result:
    return caller.view(memory).get(memory_id)


@router.post("/search", summary="Mem0: search")
def search(body: Mem0SearchBody, memory: Mem, caller: Who) -> Result:
    top_k = body.top_k if body.top_k is not None else body.limit
    return caller.view(memory).search(
        body.query,
        **body.scope(),
        filters=body.filters,
        top_k=10 if top_k is None else top_k,
        threshold=body.threshold,
    )


@router.put("/memories/{memory_id}", summary="Mem0: update a memory (body: the new data)")
def update(memory_id: str, body: dict[str, Any], memory: Mem, caller: Who) -> Result:
    text = body.get("text", body.get("data", body.get("memory")))
    metadata = body.get("metadata")
    unknown = set(body) - {"text", "data", "memory", "metadata"}
    if unknown:
        raise InvalidRequest(
            f"unknown fields {shown(sorted(unknown))}; send text (or data) and metadata"
        )
    return caller.view(memory, "write").update(memory_id, text, metadata)


@router.get("/memories/{memory_id}/history", summary="Mem0: a memory's history")
def history(memory_id: str, memory: Mem, caller: Who) -> list[dict[str, Any]]:
    return caller.view(memory).history(memory_id)["results"]


@router.delete("/memories/{memory_id}", summary="Mem0: delete a memory")
def delete(memory_id: str, memory: Mem, caller: Who) -> dict[str, str]:
    caller.view(memory, "write").delete(memory_id)
    return {"message": "Memory deleted successfully"}


@router.delete("/memories", summary="Mem0: delete a scope's memories")
def delete_all(memory: Mem, caller: Who, scope: QueryScope) -> dict[str, str]:
    _require_scope(scope, caller.tenant)
    caller.view(memory, "write").delete_all(**scope)
    return {"message": "All relevant memories deleted"}


@router.post("/reset", summary="Mem0: delete everything (admin)")
def reset(memory: Mem, caller: Who) -> dict[str, str]:
    caller.view(memory, "admin").reset()
    return {"message": "All memories reset"}


@router.post("/configure", include_in_schema=False)
def configure() -> Any:
    return error_response(
        410,
        "gone",
        "/configure is not offered: configure the server with its config file or "
        "environment and restart it",
    )


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse(url="/ui/")
