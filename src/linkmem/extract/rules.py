"""Candidate entities from a parsed ``Doc`` and its raw text: small, pure functions.

Five sources, best first: spaCy NER (with brand + model compounds and holidays it splits
or files under dates), code-like identifiers, name spans the NER missed (capitalised, or
lower-case software and places), quoted text, and topic noun compounds. Each candidate
carries its source priority (lower wins) and character offsets into the raw text; the
extractor resolves overlaps (:func:`linkmem.extract.spacy.resolve`). A transcript line's
speaker label is split off before parsing (:func:`split_speaker`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from spacy.lang.en.stop_words import STOP_WORDS

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind
from linkmem.extract.dialogue import REPLY_OPENERS, is_chat_word, is_vocative, strip_greeting
from linkmem.extract.holidays import holiday_candidates
from linkmem.extract.openers import Words, common_opener, is_day, is_pronoun, unlabelled_opener
from linkmem.extract.places import place_candidates
from linkmem.extract.products import facet_topic, product_candidates, software_candidates
from linkmem.extract.spans import (
    IDENT,
    MAX_CHARS,
    NAME,
    NER,
    QUOTE,
    Candidate,
    Doc,
    Token,
    capitalised_mid_sentence,
    inner_caps,
    is_name_like,
    is_noise,
    make,
    not_a_word,
    overlaps,
    sentence_initial,
    span_text,
)
from linkmem.extract.topics import topic_candidates

Lemmatize = Callable[[Token], str]

_COMMA_NUMBER = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")


def candidates(
    doc: Doc,
    text: str,
    lemmatize: Lemmatize,
    english: frozenset[str] = frozenset(),
    not_nouns: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Every candidate from every source, unresolved. ``english`` (known English words)
    lets an unknown lower-case word in a software frame count as a name; with ``not_nouns``
    (English adjectives, adverbs and verbs) they tell a common word opening a sentence from a
    name (:mod:`linkmem.extract.openers`)."""
    words = Words(english, not_nouns)
    named, amounts = _entity_tokens(doc)
    found = list(ner_candidates(doc, words))
    found += identifier_candidates(text)
    if not _shouting(doc):  # in ALL-CAPS text capitals say nothing about names
        found += name_candidates(doc, named | amounts, words)
        found += product_candidates(doc)
        found += holiday_candidates(doc)
    found += software_candidates(doc, lemmatize, english)
    found += place_candidates(doc)
    found += quote_candidates(text)
    names = [c for c in found if c.kind is EntityKind.PROPER]
    topics = topic_candidates(doc, amounts, lemmatize)
    return found + [t for t in topics if not facet_topic(t, names)]


def _shouting(doc: Doc) -> bool:
    words = [t for t in doc if t.is_alpha and len(t) > 1]
    return len(words) >= 3 and sum(t.is_upper for t in words) > 0.7 * len(words)


def _entity_tokens(doc: Doc) -> tuple[set[int], set[int]]:
    """Token indices inside kept NER entities, and inside date/number entities.

    A name the NER swallowed into a number or date ("OpenClaw 12,400" as CARDINAL,
    "MySQL to PostgreSQL 16" as DATE) is not counted as part of the amount.
    """
    named: set[int] = set()
    amounts: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in lx.KEEP_LABELS:
            named.update(t.i for t in ent)
            continue
        numeric = ent.label_ not in ("DATE", "TIME")
        amounts.update(t.i for t in ent if not _name_in_amount(t, numeric))
    return named, amounts


def _name_in_amount(tok: Token, numeric: bool) -> bool:
    if not is_name_like(tok) or tok.lower_ in lx.CALENDAR_WORDS or lx.PERIOD_TOKEN.match(tok.text):
        return False
    return numeric or inner_caps(tok.text)


# ---------------------------------------------------------------- speaker labels
_SPEAKER = re.compile(r"([A-Z][A-Za-z'’.-]*(?: [A-Z][A-Za-z'’.-]*){0,2}):[ \t]+(?=\S)")


def split_speaker(text: str) -> tuple[Candidate | None, int]:
    """The speaker label of a transcript line ("Caroline: I went camping") as a PROPER
    candidate, and where the message after it starts. The message is parsed on its own: with
    the label in front the tagger reads the name as a noun and the message's first word as a
    name ("Caroline: Glad you came"). Generic headings ("Note:", "User:", "Re:") are not
    speakers."""
    match = _SPEAKER.match(text)
    if match is None or any(is_bad_single(w.rstrip(".")) for w in match.group(1).split()):
        return None, 0
    label = match.group(1)
    return Candidate(label, EntityKind.PROPER, NER, 0, len(label)), match.end()


# ---------------------------------------------------------------- shared filters
def is_bad_single(word: str, *, named: bool = False) -> bool:
    """A one-word candidate that is generic, a title, or a stop word.

    ``named`` marks a word the NER called a PERSON, which keeps names like "May" and
    "Will". All-capital acronyms ("US", "IT") are never rejected as stop words.
    """
    low = word.lower()
    generic = (lx.GENERIC_ROLES, lx.GENERIC_SINGLES, lx.EMPTY_HEADS, lx.TITLES)
    if len(word) < 2 or any(low in words for words in generic) or is_chat_word(word):
        return True
    is_acronym = word.isupper() and word.isalpha()
    return low in STOP_WORDS and not (named or is_acronym)


def _trim(toks: list[Token]) -> list[Token]:
    """Drop leading determiners/possessives/titles and trailing possessives/punctuation, and
    chat shorthand and symbols at either end ("Omg Taylor Swift lol", "Luna 🐱")."""
    while toks and (toks[0].lower_ in lx.LEADING_STRIP or toks[0].is_punct or not_a_word(toks[0])):
        toks = toks[1:]
    while toks and (
        toks[-1].tag_ == "POS"
        or not_a_word(toks[-1])
        or toks[-1].is_punct
        or toks[-1].lower_ in lx.NAME_CONNECTORS
        or _COMMA_NUMBER.match(toks[-1].text)
    ):
        toks = toks[:-1]
    return toks


# ---------------------------------------------------------------- (a) NER


def ner_candidates(doc: Doc, words: Words | None = None) -> Iterator[Candidate]:
    """Named entities with a kept label, split at "and"/"or"/commas and at a detached inner
    word (:func:`_detached`), trimmed and filtered."""
    for ent in doc.ents:
        if ent.label_ not in lx.KEEP_LABELS:
            continue
        for part in _name_parts(_title_tail(list(ent)), detach=ent.label_ in lx.SPLIT_LABELS):
            toks = _trim(_strip_opener(strip_greeting(part), ent.label_))
            if is_vocative(toks) or _reply_opener(toks):
                continue
            if toks and _acceptable_name(toks, named=ent.label_ == "PERSON"):
                if len(toks) > 1 or not common_opener(toks[0], ent.label_, words):
                    yield make(doc, toks, EntityKind.PROPER, NER)


def _title_tail(toks: list[Token]) -> list[Token]:
    """The entity with the rest of a title the NER left out: a title's preposition right
    after it (:func:`_title_preposition`), then capitalised words outside any entity hanging
    from the preposition ("Have you heard Ode to Joy?" labels only "Ode")."""
    doc, end = toks[0].doc, toks[-1].i + 1
    if end >= len(doc) or not _title_preposition(doc[end]):
        return toks
    start = end + 1 + (end + 1 < len(doc) and doc[end + 1].lower_ in ("the", "a"))
    stop = start
    while stop < len(doc) and not doc[stop].ent_type_ and is_name_like(doc[stop]):
        stop += 1
    if stop == start or doc[start].head.i not in (end, start - 1):
        return toks
    return toks + list(doc[end:stop])


def _strip_opener(toks: list[Token], label: str) -> list[Token]:
    """Drop a sentence-opening gerund or chat word the NER ran into a name ("Learning German
    has been tough", "Glad Max is doing well")."""
    if len(toks) < 2 or label not in lx.SPLIT_LABELS or not sentence_initial(toks[0]):
        return toks
    first = toks[0]
    gerund = first.tag_ == "VBG" or (first.lower_.endswith("ing") and first.tag_ != "NNP")
    chat = label == "PERSON" and first.lower_ in REPLY_OPENERS
    return toks[1:] if gerund or chat else toks


def _name_parts(toks: list[Token], *, detach: bool) -> Iterator[list[Token]]:
    """The entity cut at detached words (when ``detach``), then at conjunctions; a part
    after a detached "on"/"in" that reads as a date goes ("the Fleece on Sat 13/1")."""
    chunks: list[tuple[Token | None, list[Token]]] = [(None, [])]
    for tok in toks:
        if detach and _detached(tok, toks):
            chunks.append((tok, []))
        else:
            chunks[-1][1].append(tok)
    for cue, chunk in chunks:
        if cue is None or not _dated(cue, chunk):
            yield from _split_at_conjunction(chunk)


def _split_at_conjunction(toks: list[Token]) -> Iterator[list[Token]]:
    part: list[Token] = []
    for tok in toks:
        if tok.text in (",", ";") or (tok.pos_ == "CCONJ" and tok.lower_ in ("and", "or")):
            yield part
            part = []
        else:
            part.append(tok)
    yield part


def _detached(tok: Token, toks: list[Token]) -> bool:
    """A lower-case preposition or verb inside an entity that the parser hangs outside it,
    after a capitalised word and before another: the NER ran two names together ("We took
    Leo to Lisbon" gives one ORG "Leo to Lisbon", "to" hanging from "took"). A name's own
    "of" or "to" hangs inside it ("Bank of America", "University of Porto")."""
    first, last = toks[0].i, toks[-1].i
    if not first < tok.i < last or tok.pos_ not in lx.DETACHED_POS or not tok.text.islower():
        return False
    doc = tok.doc
    before = doc[tok.i - 1]
    if first <= tok.head.i <= last or not (tok.whitespace_ and before.whitespace_):
        return False  # hangs inside, or joined by hyphens ("Stratford-upon-Avon")
    if tok.lower_ in lx.TITLE_PREPOSITIONS and tok.head.lower_ in lx.TITLE_VERBS:
        return False  # a title liked or heard: "I love Ode to Joy" (PERSON)
    after = doc[tok.i + 1 : last + 1]
    return before.text[:1].isupper() and any(t.text[:1].isupper() for t in after)


def _dated(cue: Token, chunk: list[Token]) -> bool:
    return cue.lower_ in lx.TEMPORAL_CUES and any(
        t.like_num or t.lower_ in lx.CALENDAR_WORDS for t in chunk
    )


def _acceptable_name(toks: list[Token], *, named: bool) -> bool:
    text = " ".join(t.text for t in toks)
    if is_noise(text) or not any(c.isupper() for c in text) or is_day(toks):
        return False
    if len(toks) == 1 and is_pronoun(text):
        return False
    return len(toks) > 1 or not (is_bad_single(text, named=named) or _fragment_head(toks[0]))


def _fragment_head(tok: Token) -> bool:
    """The first word of a verbless note ("Allergic to peanuts", "Lunch with Tom"): the
    NER often calls it a name, the tagger and parser know better."""
    plain = tok.tag_ not in ("NNP", "NNPS") and not inner_caps(tok.text)
    return plain and tok.dep_ == "ROOT" and sentence_initial(tok)


# ---------------------------------------------------------------- (b) identifiers


def identifier_candidates(text: str) -> list[Candidate]:
    """Code-like tokens in the raw text: URLs, paths, dotted/snake/camel names, ids."""
    taken: list[Candidate] = []
    for pattern, accept in lx.IDENTIFIER_SHAPES:
        for m in pattern.finditer(text):
            start, end = m.span(1 if pattern.groups else 0)
            while end > start and text[end - 1] in ".,;:!?)]}'\"":
                end -= 1
            word = text[start:end]
            if 1 < len(word) <= MAX_CHARS and accept(word):
                cand = Candidate(word, EntityKind.IDENTIFIER, IDENT, start, end)
                if not any(overlaps(cand, t) for t in taken):
                    taken.append(cand)
    return taken


# ---------------------------------------------------------------- (c) name spans


def name_candidates(doc: Doc, blocked: set[int], words: Words | None = None) -> Iterator[Candidate]:
    """Runs of capitalised name-like tokens outside any NER entity ("MacBook Pro"); a lone
    common word opening a sentence is no name (:func:`unlabelled_opener`)."""
    for run in _name_runs(doc, blocked):
        toks = _trim(strip_greeting(run))
        if not toks or is_vocative(toks) or _reply_opener(toks):
            continue
        if is_noise(" ".join(t.text for t in toks)):
            continue
        if len(toks) > 1 or _acceptable_single_name(toks[0], words):
            yield make(doc, toks, EntityKind.PROPER, NAME)


def _name_runs(doc: Doc, blocked: set[int]) -> Iterator[list[Token]]:
    run: list[Token] = []
    i = 0
    while i < len(doc):
        tok = doc[i]
        if i not in blocked and is_name_like(tok):
            run.append(tok)
        elif run and _connects(doc, i, blocked):
            run.extend(doc[i : i + _connector_len(doc, i)])
            i += _connector_len(doc, i) - 1
        else:
            if run:
                yield run
            run = []
        i += 1
    if run:
        yield run


def _connector_len(doc: Doc, i: int) -> int:
    two = i + 1 < len(doc) and doc[i + 1].lower_ in lx.NAME_CONNECTORS
    return 2 if two else 1


def _connects(doc: Doc, i: int, blocked: set[int]) -> bool:
    """A name's own lower-case word ("Bank of America"), or a title's preposition: one that
    the parse hangs from the word before it or from a verb of liking or hearing, with the
    next word hanging from it ("Grandpa loves Road to Nowhere", "we listened to Ode to
    Joy"; names the NER found are never joined: "We took Leo to Lisbon")."""
    word = doc[i]
    if word.text[:1].isupper():
        return False
    nxt = i + _connector_len(doc, i)
    if nxt >= len(doc) or nxt in blocked or not is_name_like(doc[nxt]):
        return False
    return word.lower_ in lx.NAME_CONNECTORS or (_title_preposition(word) and doc[nxt].head.i == i)


def _title_preposition(tok: Token) -> bool:
    if tok.lower_ not in lx.TITLE_PREPOSITIONS or tok.i == 0:
        return False
    return tok.head.i == tok.i - 1 or tok.head.lower_ in lx.TITLE_VERBS


def _reply_opener(toks: list[Token]) -> bool:
    """One word like "Glad" or "Cool" opening a sentence: chat, not a name."""
    return len(toks) == 1 and toks[0].lower_ in REPLY_OPENERS and sentence_initial(toks[0])


def _acceptable_single_name(tok: Token, words: Words | None) -> bool:
    low = tok.lower_
    if low in lx.GENERIC_HEADS or (low in lx.CALENDAR_WORDS and _temporal_context(tok)):
        return False
    if is_pronoun(tok.text) or low in lx.WEEKDAYS or unlabelled_opener(tok, words):
        return False
    plural = low.endswith("s") and not low.endswith("ss") and not inner_caps(tok.text)
    if plural and sentence_initial(tok):
        return False  # "Glasses need cleaning": a plural the tagger took for a name
    title_case = tok.text[0].isupper() and tok.text[1:].islower()
    if title_case and (tok.tag_ == "NNP" or capitalised_mid_sentence(tok)):
        return not is_bad_single(tok.text, named=True)  # "May", "Will": names, not "It"
    return not is_bad_single(tok.text)


def _temporal_context(tok: Token) -> bool:
    """A number or a cue word ("in", "next", "every") next to it: a date."""
    doc = tok.doc
    prev = doc[tok.i - 1] if tok.i > 0 else None
    nxt_num = tok.i + 1 < len(doc) and doc[tok.i + 1].like_num
    return nxt_num or (prev is not None and (prev.lower_ in lx.TEMPORAL_CUES or prev.like_num))


# ---------------------------------------------------------------- (d) quotes


def quote_candidates(text: str) -> list[Candidate]:
    """Short quoted titles and terms: straight and curly, double and single quotes."""
    out = []
    for pattern in lx.QUOTE_SHAPES:
        for m in pattern.finditer(text):
            start, end = m.span(1)
            while start < end and text[start].isspace():
                start += 1
            while end > start and (text[end - 1].isspace() or text[end - 1] in ".,;:!?"):
                end -= 1
            inner = span_text(text, start, end)
            if _acceptable_quote(inner):
                out.append(Candidate(inner, EntityKind.QUOTED, QUOTE, start, end))
    return out


def _acceptable_quote(inner: str) -> bool:
    words = inner.split()
    if is_noise(inner) or not 1 <= len(words) <= 8:
        return False
    if len(words) == 1:
        return not is_bad_single(inner, named=inner[:1].isupper())
    return words[0].lower() not in lx.SPEECH_STARTS  # reported speech, not a title
