"""What every route depends on: the process's ``Memory``, the caller, and the scope ids of a
query string."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.security import HTTPBearer

from linkmem.access import Caller, resolve_request_caller
from linkmem.memory import Memory

#: Declared for the OpenAPI page's "Authorize" button; the header is parsed by linkmem.access.
_bearer = HTTPBearer(auto_error=False, description="An API key from `linkmem keys create`")


def memory_of(request: Request) -> Memory:
    return request.app.state.memory


def get_caller(request: Request, _: Annotated[Any, Depends(_bearer)] = None) -> Caller:
    headers = request.headers
    return resolve_request_caller(
        memory_of(request), headers.get("authorization"), headers.get("host")
    )


def query_scope(
    user_id: Annotated[str | None, Query()] = None,
    agent_id: Annotated[str | None, Query()] = None,
    run_id: Annotated[str | None, Query()] = None,
) -> dict[str, str | None]:
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}


Mem = Annotated[Memory, Depends(memory_of)]
Who = Annotated[Caller, Depends(get_caller)]
QueryScope = Annotated[dict[str, str | None], Depends(query_scope)]
