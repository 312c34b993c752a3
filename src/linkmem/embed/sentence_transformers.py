"""Optional embedder: any sentence-transformers model from a local folder (needs torch).

Install with ``pip install 'linkmem[sentence-transformers]'``. sentence_transformers is imported
when an embedder is created, never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from linkmem.embed.base import l2_normalise
from linkmem.embed.registry import check_texts
from linkmem.errors import ModelUnavailable

INSTALL_HINT = "pip install 'linkmem[sentence-transformers]'"


def _import_sentence_transformer() -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ModelUnavailable(
            f"The sentence-transformers embedder needs sentence-transformers and torch: "
            f"run {INSTALL_HINT}, or use the default onnx provider."
        ) from exc
    return SentenceTransformer


class SentenceTransformerEmbedder:
    """Wraps ``SentenceTransformer(model_name_or_path)`` on the CPU; rows are unit length."""

    def __init__(
        self, model_name_or_path: str, *, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        sentence_transformer = _import_sentence_transformer()
        name = str(model_name_or_path).rstrip("/\\") or str(model_name_or_path)
        try:
            self._model = sentence_transformer(name, device=device)
        except Exception as exc:  # hub, file-system and torch errors alike
            raise ModelUnavailable(
                f"sentence-transformers could not load {name!r}: {exc}. Give the path of a "
                "local model folder (models are not downloaded at run time)."
            ) from exc
        # sentence-transformers 6 renamed get_sentence_embedding_dimension.
        model = self._model
        get_dim = getattr(model, "get_embedding_dimension", None)
        dim = get_dim() if get_dim else model.get_sentence_embedding_dimension()
        if not dim:
            raise ModelUnavailable(
                f"{name!r} does not report its embedding dimension: use a sentence-transformers "
                "model folder (with modules.json and a pooling layer)."
            )
        self.dim = int(dim)
        self.model_id = f"st:{name}"
        self._batch_size = batch_size

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            items,
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalise(vectors)
