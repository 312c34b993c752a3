"""The keyword postings cache, moved to ``linkmem.store.caches.keyword_postings`` (both
backends use it); its names stay importable from here. SQLite reads the postings it caches in
``sqlite.keyword``."""

from linkmem.store.caches.keyword_postings import (
    DEFAULT_KEYWORD_CACHE_BYTES,
    KeywordCache,
    KeywordScores,
    TermPostings,
    bm25_of_rows,
)

__all__ = [
    "DEFAULT_KEYWORD_CACHE_BYTES",
    "KeywordCache",
    "KeywordScores",
    "TermPostings",
    "bm25_of_rows",
]
