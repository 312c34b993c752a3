"""The kind of thing a question asks for, matched to the names and titles the scope stores.

"What European countries has Maria been to?" asks for countries; the turns that answer name
one ("this pic in Spain", "that trip to England") and share no word with the question, and
nothing else links them to it: the question names a person, whose boost covers half the
conversation. So the words between the question word and its verb ("European countries") are
embedded beside the query and matched, by similarity, to the stored proper names and titles
of at most ``entity_pool_max_links`` links (specific ones: not the people talking); each
memory that names one gains ``asked_kind_weight`` times the similarity, added to its entity
boost (a boost of one entity does not hide the other: the person asked about and the kind).
Only questions of the shape "what / which / how many <words> <auxiliary> ..." have a kind.

A question that lists the instances of a one-word kind ("What shelters does Maria volunteer
at?", "How many games has John won?", "What types of yoga ...") is also matched to the stored
topics whose head is that word ("homeless shelter", "thrilling game", "kundalini yoga"):
a turn that names one names a thing of the kind, in words the question may not share
(``asked_kind_topic_heads``). A kind of several words is left to the names: its modifier
narrows it ("board games" are no "video game"), and a head says nothing of the modifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.entities.query_entities import EDGE_PUNCTUATION, singulars
from linkmem.extract.base import EntityKind
from linkmem.store.base import Store
from linkmem.types import Scope

_AUXILIARY = r"(?:has|have|had|does|do|did|is|are|was|were|can|could|will|would|should)"
_WORD = rf"(?!{_AUXILIARY}\b)[\w'.-]+"
#: "what / which / how many", an optional "kind(s) / type(s) / sort(s) of", one to four
#: words that are not auxiliaries, then an auxiliary: the words are the kind asked for.
_ASKED = re.compile(
    r"^\s*(?:what|which|how many)\s+(?:(?:kinds?|types?|sorts?) of\s+)?"
    rf"((?:{_WORD}\s+){{0,3}}?{_WORD})\s+{_AUXILIARY}\b",
    re.IGNORECASE,
)
#: "what / which / how many" then "kind(s) / type(s) / sort(s) of": the question lists kinds.
_TYPES_OF = re.compile(
    r"^\s*(?:what|which|how many)\s+(?:kinds?|types?|sorts?) of\s", re.IGNORECASE
)
#: Entity kinds a kind of thing is matched to by similarity: names and titles (a topic shares
#: words with many things; topics are matched by their head, ``listed_head``).
ASKED_KINDS = frozenset({EntityKind.PROPER, EntityKind.QUOTED})


def asked_kind(question: str) -> str | None:
    """The kind of thing ``question`` asks for ("What European countries has Maria been to?"
    -> "European countries"), or None."""
    match = _ASKED.match(question)
    return match.group(1) if match else None


#: Plural words that count occasions or spans, not things ("How many times has Nate ...").
NOT_KINDS = frozenset("time way day week month year hour minute".split())


def listed_head(question: str, kind: str | None) -> str | None:
    """The word whose instances ``question`` lists, lower-cased as asked, when its ``kind``
    (``asked_kind``) is one word in the plural ("What shelters ..." -> "shelters") or follows
    "types of" ("What types of yoga ..." -> "yoga"); else None ("Which book was ...", "How
    many board games ...", "How many times ...")."""
    if kind is None or len(kind.split()) != 1:
        return None
    word = kind.strip(EDGE_PUNCTUATION).lower()
    if not word.isalpha() or not _forms(word).isdisjoint(NOT_KINDS):
        return None
    if singulars(word) or _TYPES_OF.match(question):
        return word
    return None


def topic_head_is(text: str, head: str) -> bool:
    """Whether a stored topic's last word is ``head`` in the singular or the plural
    ("animal shelter" and "shelters", "horror movie" and "movies")."""
    words = text.lower().split()
    return bool(words) and not _forms(words[-1]).isdisjoint(_forms(head))


def _forms(word: str) -> set[str]:
    """``word`` and the forms it may have in the singular ("movies": "movy", "movie")."""
    return {word, *(w.lower() for w in singulars(word))}


class KindVector(np.ndarray):
    """The embedding of the kind a question asks for (``kind_vector``), with ``head``: the word
    whose instances the question lists (``listed_head``), or None."""

    head: str | None = None


def raw_threshold(similarity: float, cosine_scale: float) -> float:
    """The raw cosine that calibrates to ``similarity`` (``rank.calibration``: calibrated = 1 -
    (1 - cosine) * scale)."""
    return 1.0 - (1.0 - similarity) / cosine_scale


def asked_boosts(
    vector: np.ndarray, scope: Scope, store: Store, config: RetrievalConfig
) -> dict[str, float]:
    """memory id -> its boost for naming an entity of the kind asked (``vector``: the kind's
    embedding, a ``KindVector`` when it says the head of a listed kind): the best
    ``asked_kind_weight`` * calibrated similarity over the specific names and titles at
    ``asked_kind_min_similarity`` or more, and the specific topics with that head."""
    head = getattr(vector, "head", None) if config.asked_kind_topic_heads else None
    minimum = raw_threshold(config.asked_kind_min_similarity, config.cosine_scale)
    hits = store.nearest_entities(
        scope, np.asarray(vector).reshape(1, -1), config.entity_search_k, minimum, False
    )
    similarity = dict(hits[0]) if hits else {}
    if not similarity:
        return {}
    wanted = [
        e.id
        for e in store.get_entities(list(similarity))
        if e.link_count <= config.entity_pool_max_links
        and (
            e.kind in ASKED_KINDS
            or (head is not None and e.kind == EntityKind.TOPIC and topic_head_is(e.text, head))
        )
    ]
    if not wanted:
        return {}
    out: dict[str, float] = {}
    scale = config.cosine_scale
    for entity_id, memory_ids in store.memories_of_entities(wanted, own_only=True).items():
        cosine = 1.0 - (1.0 - similarity[entity_id]) * scale
        boost = config.asked_kind_weight * cosine
        for memory_id in memory_ids:
            if boost > out.get(memory_id, 0.0):
                out[memory_id] = boost
    return out


def kind_vector(
    question: str, embed: Callable[[list[str]], np.ndarray], config: RetrievalConfig
) -> Callable[[], np.ndarray] | None:
    """A function that embeds the kind ``question`` asks for (``embed``: the embedder's
    ``embed_batch``), or None when it asks for none or the signal is off."""
    if config.asked_kind_weight <= 0:
        return None
    phrase = asked_kind(question)
    if phrase is None:
        return None
    head = listed_head(question, phrase)

    def vector() -> np.ndarray:
        out = np.asarray(embed([phrase])[0]).view(KindVector)
        out.head = head
        return out

    return vector
