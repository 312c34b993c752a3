"""Conversation context for the search vector of each memory.

A message such as "Thanks! It was made for a local church" is only findable with its
neighbours: the message it answers and the one that follows. Memories written in one call are
a conversation in order, so each one's search vector blends its own embedding with the mean
direction of its neighbours in that call. This reuses the embeddings already computed (no
extra model time) and keeps every stored vector unit-length, so cosine means the same on
every backend.
"""

from __future__ import annotations

import numpy as np

from linkmem.embed.base import l2_normalise


def contextual_vectors(vectors: np.ndarray, window: int, weight: float) -> np.ndarray:
    """Row i becomes normalise((1 - weight) * v_i + weight * normalise(sum of v_i-window..
    v_i+window)). ``weight`` 0 or a single row returns the vectors unchanged."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if weight <= 0 or window <= 0 or len(vectors) < 2:
        return vectors
    padded = np.concatenate([np.zeros((1, vectors.shape[1]), np.float32), vectors.cumsum(0)])
    index = np.arange(len(vectors))
    lo = np.clip(index - window, 0, len(vectors))
    hi = np.clip(index + window + 1, 0, len(vectors))
    context = l2_normalise(padded[hi] - padded[lo])
    return l2_normalise((1.0 - weight) * vectors + weight * context)
