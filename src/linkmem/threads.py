"""Keep numpy's BLAS to one thread while linkmem runs its models.

The ONNX embedder already uses every core; OpenBLAS threads that spin after each numpy or
spaCy call then fight it for the same two cores. Measured on a 10k-memory scope: search p50
94 ms with BLAS threads, 44 ms without. The limit applies only inside linkmem's calls and is
restored afterwards, so the host application's own numpy keeps its settings.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_controller: ThreadpoolController | None = None
_lock = threading.Lock()


def _get_controller() -> ThreadpoolController:
    global _controller
    with _lock:
        if _controller is None:
            _controller = ThreadpoolController()
        return _controller


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    with _get_controller().limit(limits=1, user_api="blas"):
        yield
