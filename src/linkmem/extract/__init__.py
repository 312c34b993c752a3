"""Entity extraction: texts in, (text, kind) entities with a normalised key out."""

from linkmem.extract.base import EntityExtractor, EntityKind, ExtractedEntity, normalise_key
from linkmem.extract.pipeline import load_pipeline, pipeline_info
from linkmem.extract.spacy import SpacyEntityExtractor

__all__ = [
    "EntityExtractor",
    "EntityKind",
    "ExtractedEntity",
    "SpacyEntityExtractor",
    "load_pipeline",
    "normalise_key",
    "pipeline_info",
]
