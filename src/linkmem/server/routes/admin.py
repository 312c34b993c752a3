"""Whole-store routes: API keys, reset, check, status, export, import and restore.

Import takes a tenant's key too (its lines are pinned to the tenant's scope); the others
need an admin key."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from linkmem.ingest import import_file, restore_file
from linkmem.server.deps import Mem, QueryScope, Who
from linkmem.server.schemas import KeyBody
from linkmem.server.streams import received_file, stream_export

router = APIRouter(prefix="/v1", tags=["admin"])
Result = dict[str, Any]


@router.post("/keys", summary="Create an API key (the secret is shown only in this answer)")
def create_key(body: KeyBody, memory: Mem, caller: Who) -> Result:
    caller.require("admin")
    key, secret = memory.keys.create(body.tenant, body.role, body.name)
    return {"key": key.to_dict(), "secret": secret}


@router.get("/keys", summary="The API keys (never their secrets)")
def list_keys(memory: Mem, caller: Who, include_revoked: bool = False) -> Result:
    caller.require("admin")
    return {"results": [k.to_dict() for k in memory.keys.list(include_revoked)]}


@router.delete("/keys/{key_id}", summary="Revoke an API key")
def revoke_key(key_id: str, memory: Mem, caller: Who) -> Result:
    caller.require("admin")
    return {"key": memory.keys.revoke(key_id).to_dict()}


@router.post("/reset", summary="Delete every memory, entity, link and history row")
def reset(memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "admin").reset()


@router.post("/check", summary="Verify the store's invariants (and repair)")
def check(memory: Mem, caller: Who, repair: bool = False) -> Result:
    return caller.view(memory, "admin").check(repair=repair)


@router.get("/status", summary="Store, models and counts")
def status(memory: Mem, caller: Who) -> Result:
    return caller.view(memory, "admin").status()


@router.get("/export", summary="The whole collection as JSONL (streamed)")
def export(memory: Mem, caller: Who) -> StreamingResponse:
    caller.require("admin")
    return StreamingResponse(
        stream_export(memory),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": 'attachment; filename="linkmem-export.jsonl"'},
    )


@router.post("/import", summary="Import a JSONL file or a conversation (body: the file)")
async def import_body(
    request: Request,
    memory: Mem,
    caller: Who,
    scope: QueryScope,
    skip_existing: bool = False,
    batch_size: Annotated[int, Query(ge=1, le=10_000)] = 256,
) -> Result:
    caller.require("write")
    async with received_file(request) as path:
        return await run_in_threadpool(
            import_file,
            memory,
            path,
            scope,
            batch_size=batch_size,
            skip_existing=skip_existing,
            tenant=caller.tenant,
        )


@router.post("/restore", summary="Restore an export file (body: the file)")
async def restore(
    request: Request,
    memory: Mem,
    caller: Who,
    batch_size: Annotated[int, Query(ge=1, le=100_000)] = 1000,
) -> Result:
    caller.require("admin")
    async with received_file(request) as path:
        return await run_in_threadpool(restore_file, memory, path, batch_size=batch_size)
