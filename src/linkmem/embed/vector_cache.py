"""A bounded memo of the vectors of short texts: entity names and queries recur.

A search embeds its query's entity names after NER has found them, so that call cannot run
beside anything; each call costs ~3 ms however short its texts (the model's weights are
read from memory once per call). The names of a scope's people and places come back in
query after query, so their vectors are kept: least recently used first out, texts of at
most ``max_chars`` characters only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np


class VectorCache:
    """Thread-safe LRU of ``text -> vector`` for texts of at most ``max_chars``."""

    def __init__(self, size: int = 4096, max_chars: int = 64) -> None:
        self.size = size
        self.max_chars = max_chars
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(
        self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray], dim: int
    ) -> np.ndarray:
        """The vectors of ``texts``: cached rows as they are, the rest from one ``compute``
        call (of the missing texts, each once), cached if short."""
        out = np.empty((len(texts), dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for row, text in enumerate(texts):
                vector = self._vectors.get(text) if len(text) <= self.max_chars else None
                if vector is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._vectors.move_to_end(text)
                    out[row] = vector
        if missing:
            computed = compute(list(missing))
            for rows, vector in zip(missing.values(), computed, strict=True):
                out[rows] = vector
            self._keep(missing, computed)
        return out

    def _keep(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if self.size <= 0:
            return
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                if len(text) <= self.max_chars:
                    self._vectors[text] = vector.copy()
                    self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
