"""Topic candidates: specific noun compounds from the parse ("machine learning", "book club")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind
from linkmem.extract.spans import TOPIC, Candidate, Doc, Token, is_noise, not_a_word

Lemmatize = Callable[[Token], str]

MAX_TOPIC_WORDS = 6


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
        if breaks or (tok.is_punct and not joins) or tok.is_quote or not_a_word(tok):
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
    run = _drop_occasion(_modifier_run(group), lemmatize)
    head = run[-1]
    words = [t for t in run if t.text != "-"]
    if len(words) < 2 or len(words) > MAX_TOPIC_WORDS:
        return None
    noun_modified = any(t.pos_ in ("NOUN", "PROPN", "VERB") for t in words[:-1])
    if _lemma(head, lemmatize) in lx.GENERIC_HEADS and not noun_modified:
        return None  # "great time" no, "vacation time" yes
    start, end = run[0].idx, head.idx + len(head)
    surface = " ".join((doc.text[start : head.idx] + _singular(head, lemmatize)).split())
    return None if is_noise(surface) else Candidate(surface, EntityKind.TOPIC, TOPIC, start, end)


def _drop_occasion(run: list[Token], lemmatize: Lemmatize) -> list[Token]:
    """Without a trailing occasion noun after a compound that names the activity: "chess club
    meeting" is about the chess club. A two-word "team meeting" keeps its head."""
    words = [t for t in run if t.text != "-"]
    if len(words) < 3 or _lemma(run[-1], lemmatize) not in lx.OCCASION_HEADS:
        return run
    if run[-2].pos_ != "NOUN" or run[-2].text == "-":
        return run
    return run[:-1]


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
