"""Product and software names the NER splits or misses.

A brand and its model are one name: the NER often cuts "Toyota Corolla Cross" into two
organisations and drops a model code ("Fiat Panda 4x4"); the parse still shows one noun
compound. Software is often written in lower case ("we set up redis", "the pgbouncer config"),
where no capital marks it: a short list of names that are no English word, and unknown words
in a software frame ("install X", "X config") with English checked against the pipeline's
own lemma tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from linkmem.extract import lexicon as lx
from linkmem.extract.base import EntityKind
from linkmem.extract.dialogue import strip_greeting
from linkmem.extract.spans import NAME, NER, Candidate, Doc, Token, is_name_like, make

Lemmatize = Callable[[Token], str]

#: NER labels a brand or a model may carry; a person, place or date is never part of one.
_PRODUCT_LABELS = frozenset({"", "ORG", "PRODUCT", "FAC", "WORK_OF_ART", "CARDINAL"})
_MODEL_CODE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$")
_UNIT = re.compile(r"^\d+(?:[a-z]{1,3}|st|nd|rd|th)$", re.IGNORECASE)  # 3pm, 5km, 90s, 2nd
_NOT_SOFTWARE = ("PERSON", "GPE", "DATE")
_ENDINGS = ("ing", "ed", "es", "s", "d")
_SOFTWARE_WORD = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


# ---------------------------------------------------------------- brand + model


def product_candidates(doc: Doc) -> Iterator[Candidate]:
    """One name for a noun compound of capitalised words and model codes whose pieces the NER
    labelled apart ("Toyota Corolla Cross", "Canon EOS R6", "Fiat Panda 4x4")."""
    for run in _compound_runs(doc):
        toks = strip_greeting(run)
        if len(toks) < 2 or not _one_compound(toks):
            continue
        if _split_by_ner(toks) or not all(is_name_like(t) for t in toks):
            yield make(doc, toks, EntityKind.PROPER, NER)


def _compound_runs(doc: Doc) -> Iterator[list[Token]]:
    """Runs of capitalised words; after the first, a model code ("4x4", "S23") or a
    capitalised generic word ("Tesla Model Y") continues a run."""
    run: list[Token] = []
    for tok in doc:
        if not run and tok.text.islower():
            continue  # fast path: most words start no name
        continues = run and (_model_code(tok) or (tok.tag_ == "NNP" and tok.text.istitle()))
        if tok.ent_type_ in _PRODUCT_LABELS and (is_name_like(tok) or continues):
            run.append(tok)
        elif run:
            yield run
            run = []
    if run:
        yield run


def _model_code(tok: Token) -> bool:
    return bool(_MODEL_CODE.match(tok.text)) and not _UNIT.match(tok.text)


def _one_compound(toks: list[Token]) -> bool:
    """Every word but the last modifies a word inside the run, and the last word does not
    modify a person or place (a title: "Google CEO Sundar Pichai")."""
    first, last = toks[0].i, toks[-1].i
    inside = all(t.dep_ == "compound" and first <= t.head.i <= last for t in toks[:-1])
    return inside and toks[-1].head.ent_type_ in _PRODUCT_LABELS  # not "Google CEO Sundar"


def _split_by_ner(toks: list[Token]) -> bool:
    """The NER saw part of the compound but not as one entity: merging adds something."""
    doc, first, last = toks[0].doc, toks[0].i, toks[-1].i
    ents = [e for e in doc.ents if e.start <= last and first < e.end]
    return bool(ents) and not (len(ents) == 1 and (ents[0].start, ents[0].end) == (first, last + 1))


# ---------------------------------------------------------------- lower-case software


def software_candidates(
    doc: Doc, lemmatize: Lemmatize, english: frozenset[str]
) -> Iterator[Candidate]:
    """Lower-case software names: listed ones anywhere, unknown words in a software frame."""
    found: set[int] = set()
    for tok in doc:  # cheap tests only here: this runs on every token
        if tok.text in lx.SOFTWARE_NAMES:
            if tok.ent_type_ not in _NOT_SOFTWARE:
                found.add(tok.i)
        elif english and tok.lower_ in lx.SOFTWARE_FACETS and tok.i > 0:
            before = doc[tok.i - 1]  # "pgbouncer config"
            if before.head.i == tok.i and _unknown_word(before, lemmatize, english):
                found.add(before.i)
        elif english and tok.dep_ == "dobj" and _software_object(tok, lemmatize):
            if _unknown_word(tok, lemmatize, english):  # "install pgbouncer"
                found.add(tok.i)
    for i in sorted(found):
        yield make(doc, [doc[i]], EntityKind.PROPER, NAME)


def _unknown_word(tok: Token, lemmatize: Lemmatize, english: frozenset[str]) -> bool:
    """A lower-case word-like token that is no English word, name or date."""
    word = tok.text
    if not _SOFTWARE_WORD.match(word) or len(word) < 3 or word in STOP_WORDS or tok.like_num:
        return False
    if tok.ent_type_ in _NOT_SOFTWARE or word in english or word in lx.COMMON_TECH_WORDS:
        return False
    return lemmatize(tok).lower() not in english


def _software_object(tok: Token, lemmatize: Lemmatize) -> bool:
    head = tok.head
    if head.pos_ != "VERB":
        return False
    word = head.lower_
    forms = {word, *(word[: -len(e)] for e in _ENDINGS if word.endswith(e))}
    # the rule lemmatizer gives "instal" for "installed"; without one the endings do
    return not forms.isdisjoint(lx.SOFTWARE_VERBS) or lemmatize(head) in lx.SOFTWARE_VERBS


def facet_topic(topic: Candidate, names: list[Candidate]) -> bool:
    """A topic that is a name plus a software facet ("redis log"): the name says it all."""
    for name in names:
        if name.start == topic.start and topic.text.startswith(name.text + " "):
            rest = topic.text[len(name.text) + 1 :]
            if rest.lower() in lx.SOFTWARE_FACETS:
                return True
    return False


# ---------------------------------------------------------------- English words

_english: dict[int, frozenset[str]] = {}
_not_nouns: dict[int, frozenset[str]] = {}


def _once_per_pipeline(
    read: dict[int, frozenset[str]], nlp: Any, load: Callable[[Any], frozenset[str]]
) -> frozenset[str]:
    key = id(nlp)
    if key not in read:
        read[key] = load(nlp)
    return read[key]


def english_words(nlp: Any) -> frozenset[str]:
    """Every lemma the pipeline's rule lemmatizer knows (about 90,000 English words), read
    once per pipeline; empty when the pipeline ships no lemma tables (the software frame
    cue is then off)."""
    return _once_per_pipeline(_english, nlp, _read_lemma_index)


def _read_lemma_index(nlp: Any) -> frozenset[str]:
    lookups = _lookups(nlp)
    if lookups is None or not lookups.has_table("lemma_index"):
        return frozenset()
    tables = [lookups.get_table("lemma_index").values()]
    if lookups.has_table("lemma_exc"):
        tables.append(lookups.get_table("lemma_exc").values())
    # the tables already hold these strings: reuse them rather than copy (~9 -> ~4 MB)
    return frozenset(w if w.islower() else w.lower() for t in tables for ws in t for w in ws)


def non_noun_words(nlp: Any) -> frozenset[str]:
    """Words the lemma tables know as an adjective, adverb or verb, with their irregular
    forms ("good", "hang", "met"): read once per pipeline, empty without lemma tables. Given
    names are nouns there when they are English words at all ("anna", "max")."""
    return _once_per_pipeline(_not_nouns, nlp, _read_open_class)


def _read_open_class(nlp: Any) -> frozenset[str]:
    from spacy.strings import get_string_id

    lookups = _lookups(nlp)
    if lookups is None or not lookups.has_table("lemma_index"):
        return frozenset()
    poses = [get_string_id(p) for p in ("adj", "adv", "verb")]
    index = lookups.get_table("lemma_index")
    words = {w.lower() for p in poses if p in index for w in index[p]}
    if lookups.has_table("lemma_exc"):
        exc = lookups.get_table("lemma_exc")
        words.update(w.lower() for p in poses if p in exc for w in exc[p])
    return frozenset(words)


def _lookups(nlp: Any) -> Any:
    if "lemmatizer" in nlp.component_names:
        return getattr(nlp.get_pipe("lemmatizer"), "lookups", None)
    path = Path(nlp.path or "") / "lemmatizer" / "lookups"
    if not nlp.path or not path.exists():
        return None
    from spacy.lookups import Lookups

    return Lookups().from_disk(path)
