"""Entity extraction: texts in, (text, kind) entities with a normalised key out.

spaCy is imported only when the extractor is first used, so ``import linkmem`` stays fast.
"""

from __future__ import annotations

from typing import Any

from linkmem.extract.base import EntityExtractor, EntityKind, ExtractedEntity, normalise_key

_LAZY = {
    "SpacyEntityExtractor": "linkmem.extract.spacy",
    "load_pipeline": "linkmem.extract.pipeline",
    "pipeline_info": "linkmem.extract.pipeline",
}

__all__ = [
    "EntityExtractor",
    "EntityKind",
    "ExtractedEntity",
    "SpacyEntityExtractor",
    "load_pipeline",
    "normalise_key",
    "pipeline_info",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'linkmem.extract' has no attribute {name!r}")
