"""A deterministic, dependency-free embedder for tests.

Each lower-cased word token is hashed (blake2b) to one dimension, a sign and a weight, so texts
sharing words get similar vectors. It counts its calls so tests can assert on caching/batching.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from linkmem.embed.base import l2_normalise
from linkmem.embed.registry import check_texts
from linkmem.errors import InvalidInput

_TOKEN = re.compile(r"\w+")


class FakeEmbedder:
    """Hashes word tokens into ``dim`` signed buckets; rows are unit length."""

    #: Not a semantic scale to calibrate: tests see its cosines as they are.
    cosine_scale = 1.0

    def __init__(self, dim: int = 32) -> None:
        if dim <= 0:
            raise InvalidInput(f"FakeEmbedder dim must be positive, got {dim}.")
        self.dim = dim
        self.model_id = f"fake:{dim}"
        self.batches = 0
        self.texts_embedded = 0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        self.batches += 1
        self.texts_embedded += len(items)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            out[row] = self._vector(text)
        return l2_normalise(out)

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float64)
        for token in _TOKEN.findall(text.lower()):
            self._add(vector, token)
        if not vector.any():
            # No tokens (or an exact cancellation): hash the whole text to keep a unit-length row.
            self._add(vector, "\x00" + text)
        return vector

    def _add(self, vector: np.ndarray, token: str) -> None:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % self.dim
        sign = 1.0 if digest[4] & 1 else -1.0
        weight = 0.5 + digest[5] / 255.0
        vector[index] += sign * weight
