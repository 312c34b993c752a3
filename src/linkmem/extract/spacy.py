"""The default entity extractor: a spaCy pipeline plus linkmem's rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linkmem.errors import ConfigError
from linkmem.extract.base import EntityKind, ExtractedEntity, normalise_key
from linkmem.extract.dialogue import about_listener, drop_chat_openers, says_little
from linkmem.extract.lexicon import LEADING_STRIP
from linkmem.extract.pipeline import lemmatizer_for, load_pipeline, pipeline_info, run_lock
from linkmem.extract.products import english_words, non_noun_words
from linkmem.extract.rules import candidates, split_speaker
from linkmem.extract.spans import IDENT, NER, QUOTE, Candidate, overlaps
from linkmem.threads import single_threaded_blas


class SpacyEntityExtractor:
    """Finds PROPER, QUOTED, TOPIC and IDENTIFIER entities with spaCy and rules.

    The pipeline is loaded (once per process) when the extractor is built, so a missing
    pipeline fails at startup with :class:`~linkmem.errors.ModelUnavailable`.
    """

    def __init__(
        self,
        pipeline: str | None = None,
        batch_size: int = 64,
        max_entities_per_text: int = 32,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if max_entities_per_text < 1:
            raise ConfigError(
                f"max_entities_per_text must be at least 1, got {max_entities_per_text}"
            )
        self.batch_size = batch_size
        self.max_entities_per_text = max_entities_per_text
        self._nlp = load_pipeline(pipeline)
        self._lemmatize = lemmatizer_for(self._nlp)
        self._english = english_words(self._nlp)
        self._not_nouns = non_noun_words(self._nlp)
        self._lock = run_lock(self._nlp)
        info = pipeline_info(pipeline)
        self.description = (
            f"spaCy {info['spacy_version']} pipeline {info['name']} {info['version']}"
        )

    def extract(self, text: str) -> list[ExtractedEntity]:
        """The entities of one text (see :meth:`extract_batch`)."""
        return self.extract_batch([text])[0]

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        """One list per text, deduplicated by key, in text order; one ``nlp.pipe`` pass."""
        results: list[list[ExtractedEntity]] = [[] for _ in texts]
        todo = [(i, t[: self._nlp.max_length]) for i, t in enumerate(texts) if t and t.strip()]
        if not todo:
            return results
        speakers = [split_speaker(t) for _, t in todo]
        bodies = [
            drop_chat_openers(t[start:]) for (_, t), (_, start) in zip(todo, speakers, strict=True)
        ]
        found = self._parse_and_read(bodies, [speaker for speaker, _ in speakers])
        for (i, _), entities in zip(todo, found, strict=True):
            results[i] = entities
        return results

    def _parse_and_read(
        self, bodies: list[str], speakers: list[Candidate | None]
    ) -> list[list[ExtractedEntity]]:
        """Parse the texts and read their entities inside one spaCy memory zone.

        Without the zone spaCy's ``Vocab``, ``StringStore`` and tokenizer cache keep every
        word they ever saw (about 2.5 KB of RSS per text of new words, forever); the zone
        frees what the batch added when it closes. So every ``Doc``, ``Token`` and string
        hash dies inside it: only plain strings leave. The lock (one per pipeline, shared by
        every extractor in the process) is required, not defensive: a zone swaps the
        allocator of the shared vocab, so a thread parsing beside an open zone has its words
        freed when that zone closes (measured: "[E018] Can't retrieve string for hash" in
        both threads, after which the vocab stays broken). BLAS runs one thread: the
        pipeline's models run on numpy's BLAS (``pipeline.OPS``), ~2x slower multi-threaded.
        """
        with self._lock, single_threaded_blas(), self._nlp.memory_zone():
            docs = self._nlp.pipe(bodies, batch_size=self.batch_size)
            return [
                self._entities(doc, body, speaker)
                for doc, body, speaker in zip(docs, bodies, speakers, strict=True)
            ]

    def _entities(self, doc: Any, body: str, speaker: Candidate | None) -> list[ExtractedEntity]:
        found = resolve(candidates(doc, body, self._lemmatize, self._english, self._not_nouns))
        if speaker is not None and not (about_listener(doc) or says_little(doc)):
            found = [speaker, *(c for c in found if c.key != speaker.key)]
        return [ExtractedEntity(c.text, c.kind) for c in self._cap(found)]

    def _cap(self, found: list[Candidate]) -> list[Candidate]:
        if len(found) <= self.max_entities_per_text:
            return found
        best = sorted(found, key=lambda c: (c.priority, c.start))[: self.max_entities_per_text]
        return sorted(best, key=lambda c: (c.start, c.end))


def resolve(found: list[Candidate]) -> list[Candidate]:
    """One candidate per span, one per key, in text order.

    Sources rank NER > identifier > name span > quote > topic, longer spans first; a
    multi-word topic may contain a proper name when it adds words ("AI safety" next to
    "AI"). An NER entity overlapping an identifier is dropped (the NER mislabels code). A
    short quote is a boundary the writer drew: an NER entity or identifier covering the
    whole quote wins, anything else inside it defers to the quote.
    """
    found = _defer_to_quotes(_drop_ner_on_code(found))
    accepted: list[Candidate] = []
    for cand in sorted(found, key=lambda c: (c.priority, c.start - c.end, c.start)):
        if all(_compatible(cand, other) for other in accepted):
            accepted.append(cand)
    accepted.sort(key=lambda c: (c.start, c.end))
    seen: set[str] = set()
    unique = []
    for cand in accepted:
        if cand.key not in seen:
            seen.add(cand.key)
            unique.append(cand)
    return unique


def _inside(a: Candidate, b: Candidate) -> bool:
    return b.start <= a.start and a.end <= b.end


def _compatible(cand: Candidate, other: Candidate) -> bool:
    if not overlaps(cand, other):
        return True
    widens = cand.end - cand.start > other.end - other.start and _inside(other, cand)
    return cand.kind is EntityKind.TOPIC and other.kind is EntityKind.PROPER and widens


def _drop_ner_on_code(found: list[Candidate]) -> list[Candidate]:
    code = [c for c in found if c.priority == IDENT]
    return [c for c in found if c.priority != NER or not any(overlaps(c, i) for i in code)]


def _defer_to_quotes(found: list[Candidate]) -> list[Candidate]:
    quotes = [c for c in found if c.priority == QUOTE]
    return [c for c in found if not any(_defers_to(c, q) for q in quotes)]


def _defers_to(cand: Candidate, quote: Candidate) -> bool:
    if cand.priority in (QUOTE, IDENT) or not _inside(cand, quote):
        return False
    return cand.priority != NER or _core(cand.text) != _core(quote.text)


def _core(text: str) -> str:
    words = normalise_key(text).split()
    return " ".join(words[1:] if words and words[0] in LEADING_STRIP else words)
