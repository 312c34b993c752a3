"""Back references: a message that says "he", "she", "it" or "they" is about whom the
messages just before it named.

"We took Leo to Lisbon" / "Did he behave?" / "He's fine now, Dr. Chen was brilliant": the
last two are about Leo but do not name him, so a question naming Leo boosted every other
memory of Leo above the one that answers. Such a message is also linked to the names and
titles of the ``window`` memories before it in the same write call (their own or inherited
in turn), never to a speaker label (the people talking are hubs already).

Such links are stored as inherited (``Store.link(..., own=False)``): they boost the memory
like its own links, but count in no ``link_count`` and lead no second hop (``entities.hop``),
so a rare name stays rare however many pronouns follow it. A memory's inherited links come
from its write call: an update re-links it from its new text, in a call of its own, so it
keeps none (what it referred back to is not known any more).

A reply to a question is about what the question named, pronoun or not: "Did you take Max to
the vet?" / "Yes, on Monday, all fine". So a memory right after one that asks (``asks``: its
last "?" comes after its last letter or digit) inherits the same way, from the same window
(``replies``, ``RetrievalConfig.entity_inherit_replies``).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from linkmem.entities.aliases import Aliases
from linkmem.extract.base import EntityKind, ExtractedEntity, normalise_key

BACK_REFERENCES: frozenset[str] = frozenset(
    "he him his she her hers it its they them their theirs".split()
)
#: Kinds passed on: a name or a title is what a pronoun stands for; topics are not.
INHERITED_KINDS: frozenset[EntityKind] = frozenset({EntityKind.PROPER, EntityKind.QUOTED})
_WORD = re.compile(r"[a-z]+")  # "he's" -> "he", "s"


class InheritedKey(str):
    """The key of an entity a memory inherits, not one its text names. A plain ``str`` to
    every reader of a link plan (dict keys, the copies staged writes and ``infer`` make of
    its per-memory lists), so the origin travels with the key to ``apply_links``."""

    __slots__ = ()


def refers_back(message: str) -> bool:
    """The message (after any speaker label) uses a third-person pronoun."""
    return not BACK_REFERENCES.isdisjoint(_WORD.findall(message.lower()))


def asks(message: str) -> bool:
    """The message (after any speaker label) ends with a question mark, give or take what
    may follow one: spaces, closing quotes and brackets, "!", emoji ("Did you see Max? 😂")."""
    for char in reversed(message):
        if char == "?":
            return True
        if char.isalnum():
            return False
    return False


class Inheritance:
    """Adds inherited entities to each memory of a write call, memory by memory in order
    (chunk after chunk: the last ``window`` memories carry over, and whether the last one
    asked). ``replies``: a reply to a question inherits as a back reference does."""

    def __init__(self, window: int, replies: bool = True, aliases: bool = True) -> None:
        self.window = max(0, window)
        self.replies = replies
        self.speakers: set[str] = set()
        self.recent: deque[list[ExtractedEntity]] = deque(maxlen=self.window or 1)
        self.asked = False  # the memory before the next one ends with "?"
        self.aliases = Aliases() if aliases else None

    def apply(
        self, texts: Sequence[str], extracted: Sequence[Sequence[ExtractedEntity]]
    ) -> list[list[ExtractedEntity]]:
        """``extracted`` (one list per text) with each back-referring memory's inherited
        entities appended, then those it calls by an alias (``entities.aliases``)."""
        if not self.window and self.aliases is None:
            return [list(entities) for entities in extracted]
        from linkmem.extract.rules import split_speaker  # imports spaCy: not at linkmem import

        out = []
        for text, entities in zip(texts, extracted, strict=True):
            label, start = split_speaker(text)
            speaker = label.key if label is not None else None
            if speaker is not None:
                self.speakers.add(speaker)
            message = text[start:]
            keys = {e.key for e in entities}
            inherited = self._back_references(message, keys)
            if self.aliases is not None:
                keys.update(e.key for e in inherited)
                called = self.aliases.referred(message, speaker)
                inherited += [e for e in called if e.key not in keys]
                self.aliases.learn(message, speaker, entities)
            out.append(list(entities) + inherited)
            self.recent.append(self._names(entities) + inherited)
            self.asked = asks(message)
        return out

    def _back_references(self, message: str, keys: set[str]) -> list[ExtractedEntity]:
        if not self.window:
            return []
        if refers_back(message) or (self.replies and self.asked):
            return [e for e in self._from_recent() if e.key not in keys]
        return []

    def _names(self, entities: Sequence[ExtractedEntity]) -> list[ExtractedEntity]:
        return [
            e
            for e in entities
            if e.kind in INHERITED_KINDS and normalise_key(e.text) not in self.speakers
        ]

    def _from_recent(self) -> list[ExtractedEntity]:
        unique = {e.key: e for names in self.recent for e in names}
        return [e for e in unique.values() if e.key not in self.speakers]
