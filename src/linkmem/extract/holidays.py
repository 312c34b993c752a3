"""Holidays and festivals: names the NER files under dates ("Ramadan", "Halloween this
year", "Boxing Day") or mistakes for people ("Valentine's Day"), so the date filter would
drop them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind, normalise_key
from linkmem.extract.spans import NER, Candidate, Doc, Token, make

MAX_HOLIDAY_TOKENS = 6  # "Day of the Dead", "Eid al - Fitr"
_DATE_LABELS = ("DATE", "EVENT")
#: The first token of each listed holiday ("mother" for "Mother's Day", "st." for "St.
#: Patrick's Day"): only a token in this set starts a lookup.
_FIRST_WORDS = frozenset(re.match(r"[a-z.]+", h).group(0) for h in lx.HOLIDAYS)


def holiday_candidates(doc: Doc) -> Iterator[Candidate]:
    """Listed holidays anywhere (capitalised), and "<Capitalised> Day/Eve/Night" in dates."""
    taken: set[int] = set()
    chosen = []
    for toks in sorted([*_listed_holidays(doc), *_day_names(doc)], key=lambda r: -len(r)):
        if not taken & {t.i for t in toks}:
            taken.update(t.i for t in toks)
            chosen.append(toks)
    for toks in sorted(chosen, key=lambda r: r[0].i):
        yield make(doc, toks, EntityKind.PROPER, NER)


def _listed_holidays(doc: Doc) -> Iterator[list[Token]]:
    i = 0
    while i < len(doc):
        starts = _capitalised(doc[i]) and doc[i].lower_ in _FIRST_WORDS
        size = _longest_listed(doc, i) if starts else 0
        if size:
            yield _without_possessive(list(doc[i : i + size]))
        i += max(size, 1)


def _longest_listed(doc: Doc, i: int) -> int:
    for size in range(min(MAX_HOLIDAY_TOKENS, len(doc) - i), 0, -1):
        span = doc[i : i + size]
        ends_well = _capitalised(span[-1]) or span[-1].tag_ == "POS"
        if ends_well and _key(span.text) in lx.HOLIDAYS:
            return size
    return 0


def _day_names(doc: Doc) -> Iterator[list[Token]]:
    """Inside a date or event: a capitalised run ending in Day/Eve/Night ("Labor Day
    weekend" gives "Labor Day"), not starting with a time word ("Next", "The")."""
    for ent in doc.ents:
        if ent.label_ not in _DATE_LABELS:
            continue
        run: list[Token] = []
        for tok in ent:
            if _capitalised(tok) or (run and tok.tag_ == "POS"):
                run.append(tok)
                continue
            yield from _day_name(run)
            run = []
        yield from _day_name(run)


def _day_name(run: list[Token]) -> Iterator[list[Token]]:
    while run and (run[0].lower_ in lx.TEMPORAL_CUES or run[0].lower_ in lx.LEADING_STRIP):
        run = run[1:]
    while run and run[-1].lower_ not in lx.HOLIDAY_ENDINGS:
        run = run[:-1]
    if len([t for t in run if t.tag_ != "POS"]) >= 2:
        yield run


def _capitalised(tok: Token) -> bool:
    return tok.text[:1].isupper()


def _without_possessive(toks: list[Token]) -> list[Token]:
    return toks[:-1] if len(toks) > 1 and toks[-1].tag_ == "POS" else toks


def _key(text: str) -> str:
    return normalise_key(text.replace("’", "'"))
