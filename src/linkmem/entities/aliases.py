"""Aliases a conversation gives its names: "a lurcher named Pickle", "my sister Anna", "Rex,
our old beagle," and later "the dog", "my sister", "the beagle".

A message that calls a named thing or person by a common noun does not name it, so a
question naming Pickle boosted every memory that names Pickle above "The dog has worked out
how to open the treat cupboard." Within one write call (a conversation, as for back
references), a message that introduces a name with a noun teaches the alias; a later message
that says the noun after "the", "my", "our", "your", "his", "her" or "their" (an adjective
may come between: "the old dog"; not the plural: "the neighbours" are not Gunnar) inherits
the name. Whose alias it is matters for the possessives: "my sister" is the introducer's own
sister only when the introducer says it again ("my" / "our"), and the other person's when
someone else says "your sister". A later introduction of the same noun replaces the earlier
one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from linkmem.extract.base import EntityKind, ExtractedEntity, normalise_key

_NAME = r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
#: "a dog named Max", "A spaniel cross called Sprout": the noun just before.
_NAMED = re.compile(rf"\b(?P<noun>[a-z]+)\s+(?:named|called)\s+{_NAME}")
#: "my sister Anna", "our dog Max".
_POSSESSIVE = re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+(?P<noun>[a-z]+)\s+{_NAME}")
#: "Rex, our old beagle, sleeps all day": the last word before the closing punctuation.
_APPOSITION = re.compile(
    rf"{_NAME},\s+(?:my|our)\s+(?:[a-z]+\s+){{0,2}}?(?P<noun>[a-z]+)\s*[,.;!?]"
)
#: "We've got a dog! A spaniel cross called Sprout": a noun said alone, beside a naming.
_INDEFINITE = re.compile(r"\b[Aa]n?\s+(?P<noun>[a-z]+)\s*[!.,;]")
#: Nouns that name nothing in particular.
_VAGUE = frozenset(
    """one thing things lot bit time way day kind sort couple few while guy guys friend
    friends person people someone somebody anyone""".split()
)
_DETERMINERS = ("the", "my", "our", "your", "his", "her", "their")
_OWN, _THEIRS = frozenset({"my", "our"}), frozenset({"your"})


class Aliases:
    """The aliases of one write call, learnt and resolved message by message in order."""

    def __init__(self) -> None:
        self._by_noun: dict[str, tuple[ExtractedEntity, str | None]] = {}
        self._pattern: re.Pattern[str] | None = None

    def referred(self, message: str, speaker: str | None) -> list[ExtractedEntity]:
        """The named entities ``message`` (said by ``speaker``) calls by a learnt alias."""
        if self._pattern is None:
            return []
        out: dict[str, ExtractedEntity] = {}
        for m in self._pattern.finditer(message):
            determiner, noun = m.group("det").lower(), m.group("noun").lower()
            entity, introducer = self._by_noun[noun]
            if determiner in _OWN and introducer != speaker:
                continue
            if determiner in _THEIRS and introducer == speaker:
                continue
            out[entity.key] = entity
        return list(out.values())

    def learn(self, message: str, speaker: str | None, entities: Sequence[ExtractedEntity]) -> None:
        """Note the aliases ``message`` introduces for its own names (``entities``)."""
        names = {e.key: e for e in entities if e.kind is EntityKind.PROPER}
        learnt = False
        for noun, name in _introduced(message):
            entity = names.get(normalise_key(name))
            if entity is not None and noun not in _VAGUE:
                self._by_noun[noun] = (entity, speaker)
                learnt = True
        if learnt:
            nouns = "|".join(sorted(map(re.escape, self._by_noun), key=len, reverse=True))
            self._pattern = re.compile(
                rf"\b(?P<det>{'|'.join(_DETERMINERS)})\s+(?:[a-z]+\s+)?(?P<noun>{nouns})\b",
                re.IGNORECASE,
            )


def _introduced(message: str) -> list[tuple[str, str]]:
    """(noun, name) pairs ``message`` introduces; a naming also teaches the nouns said alone
    beside it ("We've got a dog! A spaniel cross called Sprout")."""
    pairs = [
        (m.group("noun").lower(), m.group("name"))
        for pattern in (_NAMED, _POSSESSIVE, _APPOSITION)
        for m in pattern.finditer(message)
    ]
    named = {name for _, name in pairs}
    if len(named) == 1:
        name = next(iter(named))
        pairs += [(m.group("noun").lower(), name) for m in _INDEFINITE.finditer(message)]
    return pairs
