"""The embedder contract: a batch of texts in, one L2-normalised float32 row per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``embed_batch`` is the primitive."""

    #: Stable identifier persisted with a store, e.g. ``"onnx:all-MiniLM-L6-v2-int8"``.
    model_id: str
    #: Vector dimension.
    dim: int

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return a ``(len(texts), dim)`` float32 array of L2-normalised rows."""
        ...


def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """The single-item form: a 1-D vector for one text."""
    return embedder.embed_batch([text])[0]


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit length (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)
