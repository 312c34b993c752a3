"""Chat conventions around names.

Greetings glued to a name ("Bye Caroline", "Hey Mel") and names used to address the listener
("Thanks, Caroline!", "Mel, guess what?") name the person spoken to, not a subject of the
message; linking them would tie every reply to its addressee. Likewise a message that only asks
or speaks of the listener ("What made you pick it?") is not about its speaker.
"""

from __future__ import annotations

import re

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc, Token

from linkmem.extract import lexicon as lx

#: Words that open a greeting or thanks and are often tagged as part of the following name.
GREETINGS: frozenset[str] = frozenset(
    """hi hey hello hiya howdy bye goodbye goodnight thanks thank thx congrats congratulations
    cheers dear yo welcome morning evening aw aww wow woah whoa oh ooh yay yeah yes yep yup
    ok okay omg haha lol hmm um sure sorry""".split()
)
#: Words that open a chat reply and that the tagger often takes for a name when they stand
#: alone at the start of a sentence ("Glad you came!", "Cool, see you then").
REPLY_OPENERS: frozenset[str] = GREETINGS | frozenset(
    """glad cool awesome nice great amazing wonderful lovely definitely absolutely totally
    agreed wanna gonna gotta oof woohoo yikes phew""".split()
)
#: Words that introduce the name after them ("Meet Benji!"): not a greeting, not an address.
INTRODUCERS: frozenset[str] = frozenset({"meet"})
FIRST_PERSON: frozenset[str] = frozenset("i me my mine myself we us our ours ourselves".split())
#: The speaker as subject or owner ("I", "my", "we").
SELF: frozenset[str] = FIRST_PERSON - {"me", "us"}
SECOND_PERSON: frozenset[str] = frozenset("you your yours yourself yourselves ya".split())
#: Laughs typed out: "haha", "hehehe", "ahah", "lolol", "lmaooo", "xD".
_LAUGH = re.compile(r"^(?=.{4})a?(?:h[aeiu])+h?$|^l(?:o+l)+z?$|^lmf?a+o+$|^rofl+$|^x+d+$")
#: Kisses that sign off a message, in lower case ("Love, Dad x", "see you xx"; not "Malcolm X").
_KISSES = re.compile(r"^(?:x+|(?:xo)+x?)$")
#: A letter typed three or more times in a row ("yesss", "heyyy", "sooo").
_STRETCH = re.compile(r"([a-z])\1{2,}")
_WORD_AND_SPACE = re.compile(r"(\S+)(\s*)")
_CLOSERS = "\"')]”’"
_EDGE_PUNCTUATION = ".,!?;:\"'()[]…“”‘’"
_CLOSING = {",", "!", "?", ".", ";", ":"}
_FINITE = frozenset({"VBZ", "VBD", "VBP", "MD"})
_PHRASE_OPENERS = frozenset({"DT", "PRP$", "NNP", "JJ", "CD"})  # "our", "the", "Anna's"
_WHO = frozenset({"who", "whom", "whose"})
_CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
#: A message with at most this many content words says nothing of its speaker (``says_little``).
SMALL_TALK_WORDS = 2


def strip_greeting(toks: list[Token]) -> list[Token]:
    """Drop leading greeting words (and commas after them) from a name span; a span that is
    only a greeting ("Woah") becomes empty. An introducing "Meet" the tagger read as part of
    the name ("Meet Benji!") goes too."""
    while toks and (is_greeting(toks[0].text) or toks[0].text == ","):
        toks = toks[1:]
    if len(toks) > 1 and toks[0].lower_ in INTRODUCERS:
        toks = toks[1:]
    return toks


def is_vocative(toks: list[Token]) -> bool:
    """A name that addresses the listener: "Bye Caroline.", "Thanks, Mel!", "It was amazing,
    Caroline.", "Caroline, that's great!". Names in lists ("Tom, Bob and Anna") are not."""
    if not toks:
        return False
    doc = toks[0].doc
    before = doc[toks[0].i - 1] if toks[0].i > 0 else None
    after = doc[toks[-1].i + 1] if toks[-1].i + 1 < len(doc) else None
    closes = after is None or after.text in _CLOSING
    if before is None or toks[0].is_sent_start:
        opens = after is not None and after.text in {",", "!"}
        return opens and not _listed(after) and not _apposition(after) and not _answer(toks)
    if _interjection(before):
        return closes
    if (
        before.text != ","
        or not closes
        or (after is not None and after.text == "," and _listed(after))
    ):
        return False
    before_comma = doc[before.i - 1] if before.i > 0 else None
    if before_comma is None or _interjection(before_comma) or _exclaims(after):
        return True  # "That's a great dream, Jon!": an apposition does not end in "!" or "?"
    return before_comma.pos_ not in ("PROPN", "NOUN")  # "Tom, Bob" or "my mom, Linda,"


def _apposition(comma: Token) -> bool:
    """A noun phrase between two commas and then the sentence's verb: "Rex, our old beagle,
    sleeps all day" describes Rex; "Mel, my dear, come here" (an order) and "Max, your
    dinner is ready" (no second comma) address the listener."""
    doc = comma.doc
    end = next((t.i for t in doc[comma.i + 1 : comma.i + 10] if t.text == ","), None)
    if end is None or end == comma.i + 1:
        return False
    phrase = doc[comma.i + 1 : end]
    nominal = phrase[-1].pos_ in ("NOUN", "PROPN") and phrase[0].tag_ in _PHRASE_OPENERS
    clause = any(t.tag_ in _FINITE or t.tag_ == "PRP" for t in phrase)
    verb = next((t for t in doc[end + 1 : end + 4] if t.pos_ != "ADV"), None)
    goes_on = verb is not None and (verb.tag_ in _FINITE or verb.lower_ in ("and", "or"))
    return nominal and not clause and goes_on  # "Anna, my cousin, and I went"


def _answer(toks: list[Token]) -> bool:
    """A name exclaimed on its own right after a "who" question answers it: "Guess who
    learned to ring the bell? Benji!" names the one who did; "Where are you? Mel!" calls."""
    doc = toks[0].doc
    first, end = toks[0].i, toks[-1].i + 1
    if end >= len(doc) or doc[end].text != "!" or first == 0 or doc[first - 1].text != "?":
        return False
    if end + 1 < len(doc) and not doc[end + 1].is_sent_start:
        return False  # "Benji! Stop that" goes on: a call
    return any(t.lower_ in _WHO for t in doc[first - 1].sent)


def _exclaims(after: Token | None) -> bool:
    return after is not None and after.text in ("!", "?")


def _listed(comma: Token) -> bool:
    """The comma is followed by another name or "and"/"or": a list, not an address."""
    doc = comma.doc
    nxt = doc[comma.i + 1] if comma.i + 1 < len(doc) else None
    return nxt is not None and (nxt.pos_ == "PROPN" or nxt.lower_ in ("and", "or"))


def _interjection(tok: Token) -> bool:
    return is_greeting(tok.text) or tok.pos_ == "INTJ"


def says_little(doc: Doc) -> bool:
    """At most ``SMALL_TALK_WORDS`` content words (nouns, names, numbers, verbs, adjectives
    that are neither stop words, chat shorthand nor chat openers): "Haha, of course.",
    "Lmao same", "Keep me posted.", "Wow, that's awesome!". Such a message is not about its
    speaker, and linking its label let a question that names the wrong person lift that
    person's small talk over the answer ("What breed is Ines's dog?" when Pablo has the
    dog). A short message in which the speaker is subject or owner of a thing ("Max and I
    watched it", "What time is my flight?") is about them; "I feel that." and "Where do I
    start?" are not."""
    content = 0
    of_self = names_a_thing = False
    for tok in doc:
        low = tok.lower_
        of_self |= low in SELF
        if tok.pos_ not in _CONTENT_POS or not tok.is_alpha or low in STOP_WORDS:
            continue
        if not is_chat_word(low):
            content += low not in REPLY_OPENERS
            names_a_thing |= tok.pos_ in ("NOUN", "PROPN")
    return content <= SMALL_TALK_WORDS and not (of_self and names_a_thing)


def about_listener(doc: Doc) -> bool:
    """A message about the person spoken to rather than its speaker: no statement in it speaks
    of the speaker ("I", "my", "we"), and it speaks of "you" or asks something without
    speaking of the speaker ("Wow! What got you into running?", "Your empathy will help
    people.", "Did you see that band?"). A speaker label then names the one who asks, not the
    one the message is about (LoCoMo dev: a quarter of the turns)."""
    statements_of_self = asks_of_self = asks = of_you = False
    for sent in doc.sents:
        words = {t.lower_ for t in sent}
        question = sent.text.rstrip(" \"')]").endswith("?")
        of_self = not FIRST_PERSON.isdisjoint(words)
        asks |= question
        asks_of_self |= question and of_self
        statements_of_self |= of_self and not question
        of_you |= not SECOND_PERSON.isdisjoint(words)
    return not statements_of_self and (of_you or (asks and not asks_of_self))


def drop_chat_openers(text: str) -> str:
    """``text`` without the chat shorthand and emoji that open its sentences ("Ngl Hey
    Caroline!" -> "Hey Caroline!", "Great. Idk Glad you came" -> "Great. Glad you came"): a
    phone capitalises the word after them as the first of its sentence, and the tagger, the
    NER and the rules for sentence openers, greetings and addresses read it as one only
    without them. Only entity texts leave the extractor, so nothing depends on the offsets."""
    kept: list[str] = []
    opening = True
    for match in _WORD_AND_SPACE.finditer(text):
        word = match.group(1)
        if opening and _chat_or_symbol(word):
            continue
        kept.append(match.group(0))
        opening = word.rstrip(_CLOSERS).endswith((".", "!", "?"))
    return "".join(kept)


def _chat_or_symbol(word: str) -> bool:
    """Chat shorthand or a symbol, but not a greeting or reply opener: "Yeah, Mel!" and
    "Oof, John, that's sad" address their listener, which the rules for addresses read from
    the "Yeah" and the "Oof"."""
    core = word.strip(_EDGE_PUNCTUATION)
    if not any(c.isalnum() for c in core):
        return True
    return is_chat_word(core) and not (is_greeting(core) or core.lower() in REPLY_OPENERS)


def is_greeting(word: str) -> bool:
    """A greeting or thanks, stretched or not ("Hey", "Heyyy", "thx")."""
    return not GREETINGS.isdisjoint(_forms(word.lower()))


def is_chat_word(word: str) -> bool:
    """Chat shorthand, a laugh, kisses, or a chat or stop word stretched ("Idk", "Lmao",
    "Hahaha", "xx", "Yesss", "Heyyy", "Sooo"): never a name nor a word of a topic. Any other
    stretched word may still be one ("Lisbonnn")."""
    low = word.lower()
    if low in lx.CHAT_SHORTHAND or _LAUGH.match(low) or _KISSES.match(word):
        return True
    stretched = _forms(low) - {low}
    return any(f in lx.CHAT_SHORTHAND or f in REPLY_OPENERS or f in STOP_WORDS for f in stretched)


def _forms(low: str) -> set[str]:
    """``low`` and, when a letter repeats three or more times, its forms with that letter once
    and twice ("yesss" -> "yes", "yess")."""
    if not _STRETCH.search(low):
        return {low}
    return {low, _STRETCH.sub(r"\1", low), _STRETCH.sub(r"\1\1", low)}
