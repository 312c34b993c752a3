"""Candidate entities from a parsed ``Doc`` and its raw text: small, pure functions.

Five sources, best first: spaCy NER, code-like identifiers, capitalised name spans the
NER missed, quoted text, and topic noun compounds. Each candidate carries its source
priority (lower wins) and character offsets into the raw text; the extractor resolves
overlaps (:func:`linkmem.extract.spacy.resolve`). A transcript line's speaker label is split
off before parsing (:func:`split_speaker`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind, normalise_key
from linkmem.extract.dialogue import REPLY_OPENERS, is_vocative, strip_greeting

NER, IDENT, NAME, QUOTE, TOPIC = range(5)  # source priorities: lower wins

Token = Any  # spacy.tokens.Token
Doc = Any  # spacy.tokens.Doc
Lemmatize = Callable[[Token], str]

MAX_CHARS = 100
MAX_TOPIC_WORDS = 6
_MARKUP = re.compile(r"\*\*|__|```|<[^>]*>|\[\[|\]\]|\{\{|\}\}|\|")
_BULLET = re.compile(r"^[-*•–—#>+]")
_COMMA_NUMBER = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")


@dataclass(frozen=True)
class Candidate:
    text: str
    kind: EntityKind
    priority: int
    start: int
    end: int

    @property
    def key(self) -> str:
        return normalise_key(self.text)


def candidates(doc: Doc, text: str, lemmatize: Lemmatize) -> list[Candidate]:
    """Every candidate from every source, unresolved."""
    named, amounts = _entity_tokens(doc)
    found = list(ner_candidates(doc))
    found += identifier_candidates(text)
    if not _shouting(doc):  # in ALL-CAPS text capitals say nothing about names
        found += name_candidates(doc, named | amounts)
    found += quote_candidates(text)
    found += topic_candidates(doc, amounts, lemmatize)
    return found


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
    if not _is_name_like(tok) or tok.lower_ in lx.CALENDAR_WORDS or lx.PERIOD_TOKEN.match(tok.text):
        return False
    return numeric or _inner_caps(tok.text)


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
def is_noise(text: str) -> bool:
    """Empty, too long, no letters (numbers, dates, amounts), markup or a bullet."""
    return (
        not text
        or len(text) > MAX_CHARS
        or not any(c.isalpha() for c in text)
        or bool(_MARKUP.search(text) or _BULLET.match(text))
    )


def is_bad_single(word: str, *, named: bool = False) -> bool:
    """A one-word candidate that is generic, a title, or a stop word.

    ``named`` marks a word the NER called a PERSON, which keeps names like "May" and
    "Will". All-capital acronyms ("US", "IT") are never rejected as stop words.
    """
    low = word.lower()
    generic = (lx.GENERIC_ROLES, lx.GENERIC_SINGLES, lx.EMPTY_HEADS, lx.TITLES)
    if len(word) < 2 or any(low in words for words in generic):
        return True
    is_acronym = word.isupper() and word.isalpha()
    return low in STOP_WORDS and not (named or is_acronym)


def overlaps(a: Candidate, b: Candidate) -> bool:
    """True when the two candidates share at least one character."""
    return a.start < b.end and b.start < a.end


def _span_text(text: str, start: int, end: int) -> str:
    return " ".join(text[start:end].split())


def _make(doc: Doc, toks: list[Token], kind: EntityKind, priority: int) -> Candidate:
    start, end = toks[0].idx, toks[-1].idx + len(toks[-1].text)
    return Candidate(_span_text(doc.text, start, end), kind, priority, start, end)


def _trim(toks: list[Token]) -> list[Token]:
    """Drop leading determiners/possessives/titles and trailing possessives/punctuation."""
    while toks and (toks[0].lower_ in lx.LEADING_STRIP or toks[0].is_punct):
        toks = toks[1:]
    while toks and (
        toks[-1].tag_ == "POS"
        or toks[-1].is_punct
        or toks[-1].lower_ in lx.NAME_CONNECTORS
        or _COMMA_NUMBER.match(toks[-1].text)
    ):
        toks = toks[:-1]
    return toks


# ---------------------------------------------------------------- (a) NER


def ner_candidates(doc: Doc) -> Iterator[Candidate]:
    """Named entities with a kept label, split at "and"/"or"/commas, trimmed and filtered."""
    for ent in doc.ents:
        if ent.label_ not in lx.KEEP_LABELS:
            continue
        for part in _split_at_conjunction(list(ent)):
            toks = _trim(strip_greeting(part))
            if is_vocative(toks) or _reply_opener(toks):
                continue
            if toks and _acceptable_name(toks, named=ent.label_ == "PERSON"):
                yield _make(doc, toks, EntityKind.PROPER, NER)


def _split_at_conjunction(toks: list[Token]) -> Iterator[list[Token]]:
    part: list[Token] = []
    for tok in toks:
        if tok.text in (",", ";") or (tok.pos_ == "CCONJ" and tok.lower_ in ("and", "or")):
            yield part
            part = []
        else:
            part.append(tok)
    yield part


def _acceptable_name(toks: list[Token], *, named: bool) -> bool:
    text = " ".join(t.text for t in toks)
    if is_noise(text) or not any(c.isupper() for c in text):
        return False
    return len(toks) > 1 or not (is_bad_single(text, named=named) or _fragment_head(toks[0]))


def _fragment_head(tok: Token) -> bool:
    """The first word of a verbless note ("Allergic to peanuts", "Lunch with Tom"): the
    NER often calls it a name, the tagger and parser know better."""
    plain = tok.tag_ not in ("NNP", "NNPS") and not _inner_caps(tok.text)
    return plain and tok.dep_ == "ROOT" and _sentence_initial(tok)


def _inner_caps(word: str) -> bool:
    return any(c.isupper() or c.isdigit() for c in word[1:])


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


def name_candidates(doc: Doc, blocked: set[int]) -> Iterator[Candidate]:
    """Runs of capitalised name-like tokens outside any NER entity ("MacBook Pro")."""
    for run in _name_runs(doc, blocked):
        toks = _trim(strip_greeting(run))
        if not toks or is_vocative(toks) or _reply_opener(toks):
            continue
        if is_noise(" ".join(t.text for t in toks)):
            continue
        if len(toks) > 1 or _acceptable_single_name(toks[0]):
            yield _make(doc, toks, EntityKind.PROPER, NAME)


def _name_runs(doc: Doc, blocked: set[int]) -> Iterator[list[Token]]:
    run: list[Token] = []
    i = 0
    while i < len(doc):
        tok = doc[i]
        if i not in blocked and _is_name_like(tok):
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
    if doc[i].lower_ not in lx.NAME_CONNECTORS or doc[i].text[:1].isupper():
        return False
    nxt = i + _connector_len(doc, i)
    return nxt < len(doc) and nxt not in blocked and _is_name_like(doc[nxt])


def _is_name_like(tok: Token) -> bool:
    word = tok.text
    if not any(c.isalpha() for c in word) or tok.is_punct or lx.PLURAL_ACRONYM.match(word):
        return False
    if word.lower() in lx.GENERIC_ROLES or word.lower() in lx.GENERIC_SINGLES:
        return False
    if word[0].islower():
        return any(c.isupper() for c in word)  # "iPhone", "macOS"
    if not word[0].isupper():
        return False
    if tok.tag_ in ("NNP", "NNPS") or _inner_caps(word):
        return True
    return _capitalised_mid_sentence(tok) and tok.pos_ in lx.NAME_POS


def _capitalised_mid_sentence(tok: Token) -> bool:
    """A capitalised word in a nominal role away from a sentence start ("met Will")."""
    return tok.dep_ in lx.NOMINAL_DEPS and not _sentence_initial(tok)


def _reply_opener(toks: list[Token]) -> bool:
    """One word like "Glad" or "Cool" opening a sentence: chat, not a name."""
    return len(toks) == 1 and toks[0].lower_ in REPLY_OPENERS and _sentence_initial(toks[0])


def _sentence_initial(tok: Token) -> bool:
    if tok.i == 0 or tok.is_sent_start:
        return True
    prev = tok.doc[tok.i - 1]
    return prev.text in lx.SENTENCE_OPENERS or "\n" in prev.whitespace_


def _acceptable_single_name(tok: Token) -> bool:
    low = tok.lower_
    if low in lx.GENERIC_HEADS or (low in lx.CALENDAR_WORDS and _temporal_context(tok)):
        return False
    plural = low.endswith("s") and not low.endswith("ss") and not _inner_caps(tok.text)
    if plural and _sentence_initial(tok):
        return False  # "Glasses need cleaning": a plural the tagger took for a name
    title_case = tok.text[0].isupper() and tok.text[1:].islower()
    if title_case and (tok.tag_ == "NNP" or _capitalised_mid_sentence(tok)):
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
            inner = _span_text(text, start, end)
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


# ---------------------------------------------------------------- (e) topics


def topic_candidates(doc: Doc, blocked: set[int], lemmatize: Lemmatize) -> Iterator[Candidate]:
    """Specific noun compounds from noun chunks ("machine learning", "Italian food")."""
    for chunk in doc.noun_chunks:
        for group in _split_chunk(chunk, blocked):
            cand = _topic(doc, group, lemmatize)
            if cand is not None:
                yield cand


def _split_chunk(chunk: Iterable[Token], blocked: set[int]) -> Iterator[list[Token]]:
    group: list[Token] = []
    for tok in chunk:
        joins = tok.text == "-" and group and not (tok.whitespace_ or group[-1].whitespace_)
        breaks = tok.i in blocked or tok.tag_ == "POS" or tok.pos_ in ("CCONJ", "NUM")
        if breaks or (tok.is_punct and not joins) or tok.is_quote:
            yield group
            group = []
        else:
            group.append(tok)
    yield group


def _topic(doc: Doc, group: list[Token], lemmatize: Lemmatize) -> Candidate | None:
    while group and _lemma(group[-1], lemmatize) in lx.EMPTY_HEADS:
        group = group[:-1]
    if not group or group[-1].pos_ != "NOUN":
        return None
    head = group[-1]
    run = _modifier_run(group)
    words = [t for t in run if t.text != "-"]
    if len(words) < 2 or len(words) > MAX_TOPIC_WORDS:
        return None
    noun_modified = any(t.pos_ in ("NOUN", "PROPN", "VERB") for t in words[:-1])
    if _lemma(head, lemmatize) in lx.GENERIC_HEADS and not noun_modified:
        return None  # "great time" no, "vacation time" yes
    start, end = run[0].idx, head.idx + len(head)
    surface = " ".join((doc.text[start : head.idx] + _singular(head, lemmatize)).split())
    return None if is_noise(surface) else Candidate(surface, EntityKind.TOPIC, TOPIC, start, end)


def _modifier_run(group: list[Token]) -> list[Token]:
    """The head and the unbroken run of specific modifiers right before it."""
    run = [group[-1]]
    for tok in reversed(group[:-1]):
        hyphen = tok.text == "-" and not tok.whitespace_
        glued = not tok.whitespace_ and run[0].text == "-"
        if not (hyphen or glued or _is_modifier(tok)):
            break
        run.insert(0, tok)
    while run and run[0].text == "-":
        run = run[1:]
    return run


def _is_modifier(tok: Token) -> bool:
    low = tok.lower_
    if low in lx.VAGUE_ADJECTIVES or tok.like_num:
        return False
    if tok.pos_ in ("NOUN", "PROPN", "ADJ"):
        return True
    return tok.tag_ in ("VBG", "VBN") and tok.dep_ in ("compound", "amod")  # "machine learning"


def _lemma(tok: Token, lemmatize: Lemmatize) -> str:
    return lemmatize(tok).lower() if tok.tag_ == "NNS" else str(tok.lower_)


def _singular(head: Token, lemmatize: Lemmatize) -> str:
    """The head noun in the singular ("neural networks" -> "neural network")."""
    if head.tag_ != "NNS":
        return str(head.text)
    lemma = lemmatize(head)
    if head.text.lower().startswith(lemma.lower()):
        return str(head.text[: len(lemma)])
    return lemma if head.text.islower() else str(head.text)
