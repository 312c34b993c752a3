"""What every rule module shares: the candidate type, building one from tokens, the noise
filter and the token tests that decide whether a word reads as a name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind, normalise_key
from linkmem.extract.dialogue import REPLY_OPENERS, is_chat_word, is_greeting

NER, IDENT, NAME, QUOTE, TOPIC = range(5)  # source priorities: lower wins

Token = Any  # spacy.tokens.Token
Doc = Any  # spacy.tokens.Doc

MAX_CHARS = 100
_MARKUP = re.compile(r"\*\*|__|```|<[^>]*>|\[\[|\]\]|\{\{|\}\}|\|")
_BULLET = re.compile(r"^[-*•–—#>+]")


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


def overlaps(a: Candidate, b: Candidate) -> bool:
    """True when the two candidates share at least one character."""
    return a.start < b.end and b.start < a.end


def span_text(text: str, start: int, end: int) -> str:
    return " ".join(text[start:end].split())


def make(doc: Doc, toks: list[Token], kind: EntityKind, priority: int) -> Candidate:
    """The candidate covering ``toks`` (consecutive tokens of ``doc``)."""
    start, end = toks[0].idx, toks[-1].idx + len(toks[-1].text)
    return Candidate(span_text(doc.text, start, end), kind, priority, start, end)


def is_noise(text: str) -> bool:
    """Empty, too long, no letters (numbers, dates, amounts), markup or a bullet."""
    return (
        not text
        or len(text) > MAX_CHARS
        or not any(c.isalpha() for c in text)
        or bool(_MARKUP.search(text) or _BULLET.match(text))
    )


def is_name_like(tok: Token) -> bool:
    """Capitalised and tagged or placed like a name, or with inner capitals ("iPhone")."""
    word = tok.text
    if not any(c.isalpha() for c in word) or tok.is_punct or lx.PLURAL_ACRONYM.match(word):
        return False
    if word.lower() in lx.GENERIC_ROLES or word.lower() in lx.GENERIC_SINGLES:
        return False
    if is_chat_word(word):
        return False
    if word[0].islower():
        return any(c.isupper() for c in word)  # "iPhone", "macOS"
    if not word[0].isupper():
        return False
    if tok.tag_ in ("NNP", "NNPS") or inner_caps(word):
        return True
    return capitalised_mid_sentence(tok) and tok.pos_ in lx.NAME_POS


def not_a_word(tok: Token) -> bool:
    """Chat shorthand or a symbol ("lol", "idk", an emoji): never part of a name or a topic."""
    return is_chat_word(tok.text) or not (tok.is_punct or any(c.isalnum() for c in tok.text))


def inner_caps(word: str) -> bool:
    return any(c.isupper() or c.isdigit() for c in word[1:])


def capitalised_mid_sentence(tok: Token) -> bool:
    """A capitalised word in a nominal role away from a sentence start ("met Will")."""
    return tok.dep_ in lx.NOMINAL_DEPS and not sentence_initial(tok)


def sentence_initial(tok: Token) -> bool:
    """First in its sentence or line, or after nothing but interjections there ("Haha Glad
    you came", "Omg, Seeing them was great"): a phone capitalises the word after them as
    it would the first."""
    if tok.i == 0 or tok.is_sent_start:
        return True
    prev = tok.doc[tok.i - 1]
    return prev.text in lx.SENTENCE_OPENERS or "\n" in prev.whitespace_ or _after_openers(tok)


def _after_openers(tok: Token) -> bool:
    """Only interjections (and punctuation) before ``tok`` in its sentence, one at least;
    read backwards, so it stops at the first other word."""
    doc, opened = tok.doc, False
    for i in range(tok.i - 1, tok.sent.start - 1, -1):
        if doc[i].is_punct:
            continue
        if not _opener(doc[i].text):
            return False
        opened = True
    return opened


def _opener(word: str) -> bool:
    return is_greeting(word) or word.lower() in REPLY_OPENERS or is_chat_word(word)
