"""The entity extractor contract: texts in, entities (text, normalised key, kind) out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class EntityKind(StrEnum):
    PROPER = "PROPER"
    QUOTED = "QUOTED"
    TOPIC = "TOPIC"
    IDENTIFIER = "IDENTIFIER"


def normalise_key(text: str) -> str:
    """The entity key: lower-case, whitespace folded."""
    return " ".join(text.strip().lower().split())


@dataclass(frozen=True)
class ExtractedEntity:
    text: str
    kind: EntityKind

    @property
    def key(self) -> str:
        return normalise_key(self.text)


class EntityExtractor(Protocol):
    """Finds entities in texts. ``extract_batch`` is the primitive."""

    #: Human-readable description for ``linkmem doctor`` (pipeline name and version).
    description: str

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        """One list per text, each deduplicated by key, in text order."""
        ...
