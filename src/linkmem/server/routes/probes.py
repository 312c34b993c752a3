"""Liveness, readiness and metrics: no API key needed (they reveal no memory)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from linkmem import __version__
from linkmem.errors import BackendUnavailable
from linkmem.server.deps import Mem
from linkmem.server.metrics import CONTENT_TYPE

router = APIRouter(tags=["probes"])


@router.get("/v1/health", summary="Liveness: the process answers")
def health() -> dict[str, Any]:
    return {"status": "ok", "version": __version__}


@router.get("/v1/ready", summary="Readiness: models loaded and store reachable (else 503)")
def ready(request: Request, memory: Mem) -> dict[str, Any]:
    warm = request.app.state.warm_up
    if not warm.done.is_set():
        raise BackendUnavailable("the models are still loading; retry in a moment")
    if warm.error is not None:
        raise warm.error
    memory.store.count_memories()  # a store that cannot be reached raises BackendUnavailable
    return {"status": "ready", "store": memory.store.info().backend}


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(request: Request) -> Response:
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE)
