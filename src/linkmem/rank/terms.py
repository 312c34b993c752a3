"""Keyword terms for BM25: lower-cased word tokens, English stop words removed, Snowball-stemmed.

Both backends index and query the same terms, so BM25 behaves the same on each.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer

from linkmem.rank.shorthand import SHORT_FORMS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MAX_TERM_CHARS = 40

#: First- and second-person words (I, me, my, we, our, you, your, ...) are terms, not stop
#: words: in a chat they say whose fact a text states ("my sister moved to Porto" is the
#: user's; "your sister" the assistant's), and an agent's user asks in the first person
#: ("where does my sister live?"). ``benchmarks/keyword_vs_fts5.py`` and ``linkmem eval
#: locomo --folds`` (full, categories 1-4, recall@10, stop words -> these kept): long chats
#: 0.750 -> 0.810 (worst conversation 0.667 -> 0.810; BM25 alone 0.476 -> 0.655, FTS5 with
#: no stop words 0.702), synthetic 0.814 -> 0.824, LoCoMo dev 0.813 -> 0.814 (folds within
#: +-0.7). Third-person pronouns stay stop words: kept too, the dev split's BM25 fell 1.5
#: points.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how if in into is it
    its itself just more most nor of off on once only or other out over own same she should
    so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was were what when where which while who whom why
    will with would s t d ll m re ve y also""".split()
)
#: Bumped whenever the terms of a text change (1: person words were stop words; 2: chat
#: shorthand, ``rank.shorthand``, was a term of its own): a store indexed with an older
#: version has its postings rebuilt when it is opened (``linkmem.integrity.upgrade_terms``).
TERMS_VERSION = 3

# A snowball stemmer keeps its working word in the instance: two threads sharing one stem each
# other's words. Each thread gets its own; the cache in front of them is thread-safe.
_stemmers = threading.local()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def terms(text: str) -> list[str]:
    """The BM25 terms of one text, in order, with repeats (term frequency counts)."""
    words = [SHORT_FORMS.get(w, w) for w in _WORD.findall(_fold(text))]
    return [_stem(w) for w in words if w not in STOP_WORDS and len(w) <= _MAX_TERM_CHARS]


def terms_batch(texts: Sequence[str]) -> list[list[str]]:
    return [terms(t) for t in texts]


def term_counts(text: str) -> Counter[str]:
    return Counter(terms(text))


def query_terms(text: str) -> list[str]:
    """Unique terms of a query, in first-seen order."""
    return list(dict.fromkeys(terms(text)))
