"""The memory explorer: a small page served at ``/ui/`` that calls the ``/v1`` routes like
any client, plus the two answers it needs that they lack (``/v1/whoami``, ``/v1/weights``).

The page's files ship in the package (``server/static/ui``) and load nothing from elsewhere:
the Content-Security-Policy below lets them reach only this server. The files themselves hold
no memory, so they are served without a key; every call the page makes carries one.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from linkmem.errors import NotFound
from linkmem.keys import format_tenant
from linkmem.server.deps import Mem, Who

router = APIRouter(tags=["explorer"])

#: Content types of the files the page is made of; no other file is served.
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"
    ),
}


@cache
def page_files() -> dict[str, bytes]:
    """Every file of the page by its path under ``static/ui`` ("js/app.js"): read once, and
    the only paths ``/ui/`` answers, so no request can name anything else."""
    files: dict[str, bytes] = {}
    pending = [(resources.files("linkmem.server").joinpath("static", "ui"), "")]
    while pending:
        folder, prefix = pending.pop()
        for node in folder.iterdir():
            if node.is_dir():
                pending.append((node, f"{prefix}{node.name}/"))
            elif PurePosixPath(node.name).suffix in TYPES:
                files[prefix + node.name] = node.read_bytes()
    return files


@router.get("/ui", include_in_schema=False)
def ui_root() -> RedirectResponse:
    return RedirectResponse(url="/ui/")


@router.get("/ui/{path:path}", include_in_schema=False)
def ui_file(path: str) -> Response:
    """A file of the page; any path without a suffix (``/ui/``, ``/ui/entities``) is the
    page itself, whose views live in the URL's ``#`` part."""
    if not PurePosixPath(path).suffix:
        path = "index.html"
    body = page_files().get(path)
    if body is None:
        raise NotFound(f"no explorer file {path!r}; open /ui/")
    return Response(body, media_type=TYPES[PurePosixPath(path).suffix], headers=HEADERS)


@router.get("/v1/whoami", summary="The caller's role and tenant (null: any scope)")
def whoami(caller: Who) -> dict[str, Any]:
    tenant = caller.tenant
    return {
        "role": caller.role,
        "tenant": format_tenant(tenant),
        "user_id": tenant.user_id if tenant else None,
        "agent_id": tenant.agent_id if tenant else None,
        "open": caller.key is None,
    }


@router.get("/v1/weights", summary="The weights that turn score_details into a score")
def weights(memory: Mem, caller: Who) -> dict[str, float]:
    """Asks for a key (``caller``) like every ``/v1`` route, though it reveals no memory."""
    config = memory.retrieval
    return {
        "cosine_scale": config.cosine_scale,
        "dense": config.dense_weight,
        "bm25": config.bm25_weight,
        "max_score": config.max_score,
    }
