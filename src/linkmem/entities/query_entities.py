"""The query's entities without a NER model: its word n-grams looked up among the scope's
entity keys.

A query can only match entities the scope already stores, so at search time the query's
entities are the stored entities whose key (``normalise_key``, as the write path keys them)
equals one of the query's n-grams of 1 to ``query_entity_words`` words. Each n-gram is
tried as written, with edge punctuation cut, and with its last word in the singular or
without "'s" (a topic is stored with a singular head: "neural networks" -> "neural
network"). Of the n-grams found, the longest win, left to right, without overlapping
(as the extractor resolves spans), except that a proper name may sit inside a longer
topic ("Caroline's LGBTQ support group": the group and Caroline). The stored vectors of
the winners stand for the query's entities (``linkmem.entities.boost``); the kind comes
from the store too, so a stored proper name earns the name boost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from linkmem.extract.base import EntityKind, normalise_key
from linkmem.rank.terms import STOP_WORDS

#: Characters cut from both ends of a word ("Paris?" -> "paris", "(Jon)" -> "jon").
EDGE_PUNCTUATION = "\"'`“”‘’()[]{}<>,;:!?."
#: A word ending in one of these ends a phrase: no n-gram runs across it ("in Paris, Jon").
PHRASE_END = ",;:!?."


@dataclass(frozen=True)
class KeySpan:
    """Words ``start`` to ``end`` (exclusive) of the query and the keys they may be stored as."""

    start: int
    end: int
    keys: tuple[str, ...]


#: What the store says about an entity a query key found: its kind and vector.
StoredEntity = tuple[str, np.ndarray]
#: The vectors of a query's name runs, or what gives them once the query's embedding is done.
NameVectors = np.ndarray | Callable[[], np.ndarray]


def key_spans(query: str, max_words: int) -> list[KeySpan]:
    """Every n-gram of 1 to ``max_words`` words within one phrase of ``query``, with the keys
    it may be stored under; n-grams of stop words only are left out."""
    words = query.split()
    spans: list[KeySpan] = []
    for start in range(len(words)):
        for end in range(start + 1, min(start + max_words, len(words)) + 1):
            if end - start > 1 and words[end - 2][-1] in PHRASE_END:
                break  # the previous word closed a phrase
            keys = _keys(words[start:end])
            if keys:
                spans.append(KeySpan(start, end, keys))
    return spans


def _keys(words: list[str]) -> tuple[str, ...]:
    cleaned = [w.strip(EDGE_PUNCTUATION) for w in words]
    if not all(cleaned) or all(w.lower() in STOP_WORDS for w in cleaned):
        return ()
    if len(cleaned) == 1 and (len(cleaned[0]) < 2 or not any(c.isalpha() for c in cleaned[0])):
        return ()
    head = cleaned[:-1]
    lasts = [cleaned[-1], *singulars(cleaned[-1])]
    found = [normalise_key(" ".join(words))] + [normalise_key(" ".join([*head, w])) for w in lasts]
    return tuple(dict.fromkeys(found))


def singulars(word: str) -> list[str]:
    """The forms ``word`` may have in the singular (none when it is no plural); "'s" cut."""
    low = word.lower()
    if low.endswith(("'s", "’s")):
        return [word[:-2]]
    if len(low) < 4 or not low.endswith("s") or low.endswith(("ss", "us", "is")):
        return []
    if low.endswith("ies"):
        return [word[:-3] + "y", word[:-1]]
    if low.endswith(("ches", "shes", "xes", "sses", "zes")):
        return [word[:-2], word[:-1]]
    return [word[:-1]]


def span_keys(spans: list[KeySpan]) -> list[str]:
    """Every key the spans may be stored under, once each."""
    return list(dict.fromkeys(k for span in spans for k in span.keys))


def chosen_entities(
    spans: list[KeySpan], found: Mapping[str, StoredEntity], limit: int
) -> list[StoredEntity]:
    """The stored entities that stand for the query's entities (see the module docstring),
    at most ``limit``, in query order."""
    matched = [(span, key) for span in spans for key in span.keys if key in found]
    matched = list({span: key for span, key in reversed(matched)}.items())  # first key wins
    matched.sort(key=lambda m: (m[0].start - m[0].end, m[0].start))
    taken: list[tuple[KeySpan, StoredEntity]] = []
    for span, key in matched:
        entity = found[key]
        if all(_compatible(span, entity, other, o) for other, o in taken):
            taken.append((span, entity))
    taken.sort(key=lambda t: t[0].start)
    unique = {id(e): e for _, e in taken}  # one entity found by two spans counts once
    return list(unique.values())[:limit]


def _compatible(span: KeySpan, entity: StoredEntity, other: KeySpan, o: StoredEntity) -> bool:
    if span.end <= other.start or other.end <= span.start:
        return True
    return entity[0] == EntityKind.PROPER and o[0] != EntityKind.PROPER


def name_runs(query: str, limit: int) -> list[tuple[KeySpan, str]]:
    """At most ``limit`` runs of name-like words (capitalised or with inner capitals, not stop
    words) with their text: what is embedded in case the store has no entity with their key
    ("NYC" near a stored "New York City")."""
    words = query.split()
    runs: list[tuple[KeySpan, str]] = []
    start = None
    for i, word in enumerate([*words, ""]):
        cleaned = word.strip(EDGE_PUNCTUATION)
        named = bool(cleaned) and _name_like(cleaned)
        if named and start is None:
            start = i
        if start is not None and (not named or word[-1] in PHRASE_END):
            end = i + 1 if named else i
            text = " ".join(w.strip(EDGE_PUNCTUATION) for w in words[start:end])
            runs.append((KeySpan(start, end, (normalise_key(text),)), text))
            start = None
    return runs[:limit]


def _name_like(word: str) -> bool:
    if word.lower() in STOP_WORDS or not any(c.isalpha() for c in word):
        return False
    return word[0].isupper() or any(c.isupper() for c in word[1:])


@dataclass(frozen=True)
class QueryEntities:
    """A query's entity spans and the vectors of its name runs (embedded with the query), from
    which ``vectors`` makes the query's entity vectors once the store has said which keys it
    holds. Without name runs, no vector waits for the query's embedding."""

    spans: tuple[KeySpan, ...]
    names: tuple[KeySpan, ...]
    name_vectors: NameVectors
    limit: int

    @property
    def keys(self) -> list[str]:
        return span_keys(list(self.spans))

    def vectors(self, found: Mapping[str, StoredEntity]) -> np.ndarray:
        """The stored vectors of the chosen entities, then those of the name runs none of
        them overlaps; at most ``limit`` rows."""
        chosen = chosen_entities(list(self.spans), found, self.limit)
        rows = [np.asarray(vector, dtype=np.float32) for _, vector in chosen]
        covered = [s for s in self.spans if any(k in found for k in s.keys)]
        name_vectors = self.name_vectors
        if callable(name_vectors):
            name_vectors = name_vectors()
        for run, vector in zip(self.names, name_vectors, strict=True):
            if not any(_overlap(run, s) for s in covered):
                rows.append(np.asarray(vector, dtype=np.float32))
        dim = name_vectors.shape[1]
        return np.stack(rows[: self.limit]) if rows else np.zeros((0, dim), dtype=np.float32)


def _overlap(a: KeySpan, b: KeySpan) -> bool:
    return a.start < b.end and b.start < a.end
