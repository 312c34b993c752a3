"""Starting the server: ``linkmem serve`` and tests call :func:`serve`."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI

from linkmem.access import check_listen_address
from linkmem.memory import Memory
from linkmem.server.allocator import tune_allocator
from linkmem.server.app import create_app

log = logging.getLogger("linkmem.server")

#: How ``--workers N`` hands the settings to each worker process (each opens its own Memory).
SETTINGS_ENV = "LINKMEM_SERVER_SETTINGS"


def serve(
    open_memory: Callable[[], Memory],
    *,
    host: str,
    port: int,
    workers: int = 1,
    settings: dict[str, Any] | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Run until interrupted. One worker serves the ``Memory`` of ``open_memory()``; with
    more, each worker process opens its own from ``settings`` (the same store)."""
    tune_allocator()  # before the models allocate
    memory = open_memory()
    try:
        announce(check_listen_address(memory, host))
    except BaseException:
        memory.close()
        raise
    if workers <= 1:
        uvicorn.run(create_app(memory, close_memory=True), host=host, port=port)
        return
    memory.close()
    os.environ[SETTINGS_ENV] = json.dumps(settings or {})
    uvicorn.run(
        "linkmem.server.run:app_from_env", factory=True, host=host, port=port, workers=workers
    )


def app_from_env() -> FastAPI:
    """The app of one worker process (``--workers N``)."""
    tune_allocator()
    settings = json.loads(os.environ.get(SETTINGS_ENV, "{}"))
    return create_app(Memory(**settings), close_memory=True)
