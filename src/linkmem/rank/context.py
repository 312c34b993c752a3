"""Conversation context for the search vector of each memory.

A message such as "Thanks! It was made for a local church" is only findable with its
neighbours: the message it answers and the one that follows. Memories written in one call are
a conversation in order, so each one's search vector blends its own embedding with the mean
direction of its neighbours in that call. This reuses the embeddings already computed (no
extra model time) and keeps every stored vector unit-length, so cosine means the same on
every backend.

An exchange of short requests and long answers (an agent's user and assistant turns) is not
such a conversation: each turn stands alone, and blending one with its neighbours (or giving
it their words) buries what it says. ``for_batch`` tells the two apart by the lengths of
neighbouring turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from linkmem.embed.base import l2_normalise
from linkmem.retrieval_config import RetrievalConfig


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


def for_batch(config: RetrievalConfig, texts: Sequence[str]) -> RetrievalConfig:
    """``config`` for the memories ``texts`` written together: with neighbour blending and
    neighbour words off when neighbouring texts differ in length by more than
    ``context_length_ratio_max`` (median), i.e. short requests beside long answers."""
    limit = config.context_length_ratio_max
    if limit <= 0 or len(texts) < 2 or neighbour_length_ratio(texts) <= limit:
        return config
    return replace(config, context_weight=0.0, keyword_context_weight=0.0)


def neighbour_length_ratio(texts: Sequence[str]) -> float:
    """The median over neighbouring texts of the longer one's length over the shorter's."""
    lengths = np.fromiter(map(len, texts), np.float64, len(texts))
    lengths = np.maximum(lengths, 1.0)
    longer = np.maximum(lengths[1:], lengths[:-1])
    return float(np.median(longer / np.minimum(lengths[1:], lengths[:-1])))
