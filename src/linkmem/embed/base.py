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


#: How the chunk vectors of a text longer than the model's window become one vector:
#: "mean" (of the unit chunk vectors), "max" (element-wise) or "first" (the first window only,
#: as a truncating model does).
LONG_TEXT_POOLING = ("mean", "max", "first")


def pool_chunks(
    vectors: np.ndarray, owners: Sequence[int], n: int, how: str = "mean"
) -> np.ndarray:
    """One unit row per text from the rows of its chunks: ``owners[i]`` is the text that row
    ``i`` of ``vectors`` belongs to (every text of ``0..n-1`` has at least one row, in order)."""
    if how not in LONG_TEXT_POOLING:
        raise ValueError(f"pooling must be one of {', '.join(LONG_TEXT_POOLING)}, got {how!r}")
    vectors = l2_normalise(vectors)
    owner = np.asarray(owners, dtype=np.int64)
    if how == "first":
        firsts = np.unique(owner, return_index=True)[1]
        return vectors[firsts]
    if how == "max":
        out = np.full((n, vectors.shape[1]), -np.inf, dtype=np.float32)
        np.maximum.at(out, owner, vectors)
        return l2_normalise(out)
    out = np.zeros((n, vectors.shape[1]), dtype=np.float32)
    np.add.at(out, owner, vectors)
    return l2_normalise(out)
