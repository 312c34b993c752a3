"""Capitalised words that only open a sentence: a common word is capitalised there, and the
small tagger and NER often take it for a name ("Family is everything to me.", "Kickboxing is a
great way to stay fit.", "Tons has gone down since then!"). Linked as names, such words tie
unrelated memories together and are passed on to the turns after them as back references.

A lone word at a sentence start is kept as a name when the NER labels it and the tagger agrees
it is a proper noun ("Max looks so peaceful", "Oliver's hilarious!"); when the NER missed it,
it is kept only if it is no English word ("Instagram and TikTok can help"). A lone pronoun
("I.", "I'm") and a bare weekday ("Last Fri") are never names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linkmem.extract import lexicon as lx
from linkmem.extract.dialogue import REPLY_OPENERS
from linkmem.extract.spans import Token, inner_caps, sentence_initial

#: Tags of a common word: a noun, a verb, an adverb or an interjection (not an adjective:
#: the tagger reads some pet names as one, "Coco looks so adorable").
COMMON_TAGS = frozenset({"NN", "NNS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "RB", "UH"})
#: NER labels of places: a place alone at a sentence start is read as a name whatever the
#: tagger says ("Reading is lovely in May").
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})
_GERUND = re.compile(r"^[A-Z][a-z]{2,}ing$")
_QUOTES = frozenset("\"'“”‘’«»([")
_SET_OFF = frozenset({",", "!", "?", ".", ";", ":", "and", "or", "&"})
#: Endings of abstract nouns ("Dedication", "Guidance", "Kindness"): common words, not names.
_SIBILANT_PLURAL = re.compile(r"(s|x|z|ch|sh)es$")
#: Dependency roles of a sentence's subject: a pet or a company named by a common word acts
#: ("Fudge stole a sock", "Tessellate is hiring"); the same word as a command or an
#: exclamation does not ("Hang in there", "Stretch after, not before", "Happy for you!").
_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
#: Dependents of a linking verb's complement ("looks amazing", "became a habit").
_PREDICATES = frozenset({"acomp", "attr", "oprd"})
_ABSTRACT = re.compile(r"(tion|sion|ance|ence|ment|ness|ity|ship|hood|dom|ism)$")


@dataclass(frozen=True)
class Words:
    """What the pipeline's lemma tables know: every English word, and the adjectives,
    adverbs and verbs among them (``linkmem.extract.products``)."""

    english: frozenset[str] = frozenset()
    not_nouns: frozenset[str] = frozenset()

    def common(self, low: str) -> bool:
        """An English word, or the plural of one ("tons", "fingers", "challenges")."""
        if low in self.english:
            return True
        if _SIBILANT_PLURAL.search(low) and low[:-2] in self.english:
            return True  # "boxes", "lunches"
        return low.endswith("s") and not low.endswith("ss") and low[:-1] in self.english


def opens_sentence(tok: Token) -> bool:
    """First word of a sentence, a line or a list item, but not of a quotation or bracket
    (a quoted title keeps its capital for its own sake: 'Ed Sheeran's "Perfect"')."""
    if not sentence_initial(tok):
        return False
    return tok.i == 0 or tok.doc[tok.i - 1].text not in _QUOTES


def is_pronoun(text: str) -> bool:
    """ "I", "I.", "I'm", "We": a pronoun standing alone."""
    return text.rstrip(".").lower().replace("’", "'") in lx.SPEECH_STARTS


def is_day(toks: list[Token]) -> bool:
    """A weekday, alone or after a time word ("Fri", "Last Fri", "next Tues")."""
    words = [t.lower_.rstrip(".") for t in toks]
    return words[-1] in lx.WEEKDAYS and all(w in lx.TEMPORAL_CUES for w in words[:-1])


def common_opener(tok: Token, label: str, words: Words | None) -> bool:
    """A lone word the NER labelled as a name that only opens a sentence: the tagger calls
    it a common noun or verb and it is an English word ("Nature is so calming", "Tons of
    people came"; not "Maxine is my sister"), or it is a gerund ("Kickboxing is a great way
    to stay fit"). Places are left alone."""
    if words is None or label in PLACE_LABELS or inner_caps(tok.text):
        return False
    if not opens_sentence(tok):
        return False
    if _GERUND.match(tok.text) or tok.lower_ in lx.CHAT_WORDS:
        return True
    if acting_subject(tok):
        return False
    return tok.tag_ in COMMON_TAGS and words.common(tok.lower_)


def acting_subject(tok: Token) -> bool:
    """A singular subject of a verb that is no copula: someone who acts ("Grace is coming
    over tonight", "Ginger called me", "Sky got a new job"), not a thing described ("Nature's
    amazing", "Nature looks amazing") nor a plural ("Tons has gone down", "Fingers crossed").
    A verb with a second subject is a misparse ("Nature's amazing, I could walk for hours")."""
    if tok.tag_ != "NN" or tok.dep_ not in _SUBJECTS or tok.head.pos_ != "VERB":
        return False
    deps = [child.dep_ for child in tok.head.children]
    return sum(dep in _SUBJECTS for dep in deps) == 1 and not _PREDICATES.intersection(deps)


def unlabelled_opener(tok: Token, words: Words | None) -> bool:
    """A lone capitalised word at a sentence start that the NER did not label and that is a
    chat word ("Yum", "Gotcha"), a gerund ("Kickboxing keeps me sane"), the first piece of a
    split word ("Gon" of "Gonna"), an English adjective, adverb or verb that is not the
    subject ("Good to see you", "Hang in there"; not "Fudge stole a sock") or an English
    noun that is abstract or modifies the next noun ("Dedication", "Family support"). Given
    names that are English nouns stay ("Ana gave Leo to Rosa"); a word alone, listed or set
    off by punctuation ("Who won the raffle? Anna!", "Biscuit, the hamster, escaped") is
    left to the vocative rules."""
    if words is None or inner_caps(tok.text) or not opens_sentence(tok):
        return False
    low = tok.lower_
    if low in REPLY_OPENERS or low in lx.CHAT_WORDS or _GERUND.match(tok.text):
        return True
    doc = tok.doc
    nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    if nxt is None or nxt.lower_ in _SET_OFF:
        return False
    if not tok.whitespace_ and nxt.is_alpha:
        return True  # "Gon" + "na"
    if low in words.not_nouns and tok.dep_ not in _SUBJECTS:
        return True
    noun = low in words.english
    return noun and (tok.dep_ == "compound" or bool(_ABSTRACT.search(low)))
