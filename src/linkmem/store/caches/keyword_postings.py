"""The postings of searched terms kept in process memory, so BM25 is summed in numpy.

Summing BM25 in SQL reads and sorts every posting of the query's terms on each search; with
neighbour words a common term has postings in about half a scope's memories (a 10k scope of
``bench_core`` texts: ~42k postings per query). Here each scope's postings of the terms it was
searched for are kept as arrays, at the scope's ``mem_version`` (every write of postings bumps
it), next to the scope's vector matrix (``linkmem.store.vectors.ScopeMatrix``): a posting's
memory is its row there, so one ``bincount`` adds up a query's scores for the whole scope and
the best rows name their ids without reading the store. Memories this process adds are
appended (``extend``, as the vector cache does); any other change reloads the terms when next
searched.

Locking: the cache's lock is a leaf, as the matrix cache's (``linkmem.store.vectors``): it is
never held while reading the store or while taking another lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from linkmem.rank.neighbour_terms import CONTEXT_SCALE
from linkmem.store.caches.scope_budget import ScopeBudget
from linkmem.store.vectors import ScopeMatrix

#: Posting bytes kept per store: 64 MiB, about 2.8M postings (a 10k scope's every term is
#: ~0.4M); past it the least recently searched scopes are dropped and reload when searched.
DEFAULT_KEYWORD_CACHE_BYTES = 64 * 2**20

#: One new memory's postings as ``store.base.posting_rows`` gives them:
#: ``(term, tf, doc_len, ctx, ctx_len)``.
NewPostings = Sequence[tuple[str, int, int, int, int]]

Ranked = list[tuple[str, float]]

#: The version a scope's terms are kept at: SQLite's ``mem_version``, PostgreSQL's
#: ``(kw_version, mem_version)`` (``postgres.search_keyword_reads``); later versions compare
#: greater.
Version = int | tuple[int, int]


@dataclass(frozen=True)
class TermPostings:
    """One term's postings in one scope: each posting's row in the scope's matrix, and its
    BM25 count and length, own plus context (as ``keyword.TF`` and ``keyword.LEN``)."""

    rows: np.ndarray  # intp
    tf: np.ndarray  # float64
    length: np.ndarray  # float64

    @classmethod
    def of_columns(cls, rows: np.ndarray, columns: Sequence[np.ndarray]) -> TermPostings:
        """From the raw integer columns tf, doc_len, ctx, ctx_len; the same float operations
        as the SQL formula, so the scores are the SQL scores."""
        tf, doc_len, ctx, ctx_len = (np.asarray(c, dtype=np.float64) for c in columns)
        scale = 1 / CONTEXT_SCALE
        return cls(np.asarray(rows, dtype=np.intp), tf + ctx * scale, doc_len + ctx_len * scale)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.tf.nbytes + self.length.nbytes

    def appended(self, other: TermPostings) -> TermPostings:
        return TermPostings(
            np.concatenate([self.rows, other.rows]),
            np.concatenate([self.tf, other.tf]),
            np.concatenate([self.length, other.length]),
        )


@dataclass
class ScopeTerms:
    """The cached terms of one scope at one version, whose matrix has ``n_rows`` rows;
    ``rewrites``: the scope's counts of rewritten memories and postings they were read at
    (SQLite's ``mem_rewrites``, ``kw_rewrites``; None: not known, never caught up)."""

    version: Version
    n_rows: int
    terms: dict[str, TermPostings] = field(default_factory=dict)
    nbytes: int = 0
    rewrites: tuple[int, int] | None = None

    def add(self, terms: dict[str, TermPostings]) -> None:
        for term, postings in terms.items():
            previous = self.terms.get(term)
            self.nbytes += postings.nbytes - (previous.nbytes if previous else -_TERM_BYTES)
            self.terms[term] = postings


#: Bytes of a term's key and arrays' headers, beside the postings.
_TERM_BYTES = 400


class KeywordCache(ScopeBudget[ScopeTerms]):
    """Per-scope term postings, bounded by bytes (least recently searched scopes go first)."""

    def __init__(self, max_bytes: int = DEFAULT_KEYWORD_CACHE_BYTES) -> None:
        super().__init__(max_bytes)

    def lookup(
        self, scope_id: int, version: Version, terms: Sequence[str]
    ) -> dict[str, TermPostings]:
        """The terms cached for the scope at exactly ``version``."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.version != version:
                return {}
            self._entries.move_to_end(scope_id)
            return {t: entry.terms[t] for t in terms if t in entry.terms}

    def remember(
        self,
        scope_id: int,
        version: Version,
        n_rows: int,
        found: dict[str, TermPostings],
        rewrites: tuple[int, int] | None = None,
    ) -> None:
        """Keep terms read at ``version`` (an entry at an older version is replaced)."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is not None and entry.version > version:
                return
            if entry is None or entry.version < version:
                entry = ScopeTerms(version, n_rows, rewrites=rewrites)
            self._put_terms(scope_id, entry, found)

    def older(self, scope_id: int, version: Version) -> ScopeTerms | None:
        """The scope's entry when it is older than ``version`` and knows its rewrites (what
        ``catch_up`` from it needs)."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.rewrites is None or not entry.version < version:
                return None
            return entry

    def catch_up(
        self,
        scope_id: int,
        base: ScopeTerms,
        version: Version,
        n_rows: int,
        added: dict[str, TermPostings],
    ) -> dict[str, TermPostings] | None:
        """``base`` moved to ``version`` by memories added after its rows (``n_rows`` in
        all), ``added`` their postings of the terms ``base`` holds; the entry's terms, or
        None when the cache no longer holds ``base``."""
        with self._lock:
            if self._entries.get(scope_id) is not base:
                return None
            grown = ScopeTerms(version, n_rows, dict(base.terms), base.nbytes, base.rewrites)
            self._put_terms(
                scope_id, grown, {t: grown.terms[t].appended(p) for t, p in added.items()}
            )
            return grown.terms

    def extend(
        self, scope_id: int, versions: tuple[Version, Version], postings: Sequence[NewPostings]
    ) -> None:
        """Append memories this process just wrote (``postings``: each new memory's, in
        row order), moving the scope from
        ``versions[0]`` to ``versions[1]``; an entry at another version is left to reload."""
        with self._lock:
            entry = self._entries.get(scope_id)
            if entry is None or entry.version != versions[0]:
                return
            added = _new_postings(entry, postings)
            grown = ScopeTerms(
                versions[1],
                entry.n_rows + len(postings),
                dict(entry.terms),
                entry.nbytes,
                entry.rewrites,
            )
            self._put_terms(
                scope_id, grown, {t: grown.terms[t].appended(p) for t, p in added.items()}
            )

    def holds(self, scope_id: int, version: Version) -> bool:
        """Whether the scope is cached at exactly ``version`` (what ``extend`` from it needs)."""
        with self._lock:
            entry = self._entries.get(scope_id)
            return entry is not None and entry.version == version

    def _put_terms(self, scope_id: int, entry: ScopeTerms, terms: dict[str, TermPostings]) -> None:
        """Store ``entry`` (which may be the scope's entry already) with ``terms`` added."""
        self._drop(scope_id)  # its bytes counted off before it grows
        entry.add(terms)
        self._put(scope_id, entry)


def _new_postings(entry: ScopeTerms, postings: Sequence[NewPostings]) -> dict[str, TermPostings]:
    """The new memories' postings of the terms ``entry`` holds, as arrays per term."""
    columns: dict[str, list[tuple[int, int, int, int, int]]] = {}
    for offset, memory_postings in enumerate(postings):
        row = entry.n_rows + offset
        for term, tf, doc_len, ctx, ctx_len in memory_postings:
            if term in entry.terms:
                columns.setdefault(term, []).append((row, tf, doc_len, ctx, ctx_len))
    out = {}
    for term, rows in columns.items():
        array = np.asarray(rows, dtype=np.int64)
        out[term] = TermPostings.of_columns(array[:, 0], array[:, 1:].T)
    return out


def bm25_of_rows(
    weighted: Sequence[tuple[float, TermPostings]], n_rows: int, avg_len: float, k1: float, b: float
) -> np.ndarray:
    """Each row's BM25: ``rank.bm25.term_score`` summed over ``weighted`` (idf, postings), in
    the SQL formula's order of operations (``keyword.KeywordTables._bm25_rows``)."""
    if not weighted:
        return np.zeros(n_rows)
    parts = [
        idf * p.tf * (k1 + 1.0) / (p.tf + k1 * ((1 - b) + b * p.length / avg_len))
        for idf, p in weighted
    ]
    rows = np.concatenate([p.rows for _, p in weighted])
    return np.bincount(rows, weights=np.concatenate(parts), minlength=n_rows)


@dataclass(frozen=True)
class KeywordScores:
    """One query's BM25 of every memory of the scopes it searched (``matrices``, with one
    score array each): the top ``k`` or the scores of given ids, as the SQL answers them.
    ``ties_by_id``: equal scores at the cut go by memory id (PostgreSQL's ``ORDER BY score
    DESC, h.memory``), else by row key (SQLite's ``p.memory``, a rowid)."""

    matrices: list[ScopeMatrix]
    scores: list[np.ndarray]
    ties_by_id: bool = False

    def top(self, k: int) -> Ranked:
        """The ``k`` best (score > 0; ties at the cut as the store's SQL breaks them), ordered
        by score then id."""
        if k <= 0:
            return []
        found: list[tuple[float, Any, str]] = []
        for matrix, scores in zip(self.matrices, self.scores, strict=True):
            if self.ties_by_id:
                rows = _rows_at_least_kth(scores, k).tolist()
                found += [(float(scores[r]), matrix.ids[r], matrix.ids[r]) for r in rows]
            else:
                rows = _best_rows(scores, k)
                found += [(float(scores[r]), int(matrix.rowids[r]), matrix.ids[r]) for r in rows]
        found.sort(key=lambda item: (-item[0], item[1]))
        best = [(mid, score) for score, _, mid in found[:k]]
        best.sort(key=lambda item: (-item[1], item[0]))
        return best

    def of(self, ids: Sequence[str], k: int) -> Ranked:
        """The scores (> 0) of ``ids`` that live in these scopes, best first, at most ``k``."""
        found: Ranked = []
        unique = list(dict.fromkeys(ids))
        for matrix, scores in zip(self.matrices, self.scores, strict=True):
            row_of = matrix.row_of
            here = [mid for mid in unique if mid in row_of]
            values = scores[[row_of[mid] for mid in here]].tolist()
            found += [(mid, value) for mid, value in zip(here, values) if value > 0]
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:k]


def _rows_at_least_kth(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of positive scores at least the ``k``-th best (ties at the cut all in)."""
    rows = np.flatnonzero(scores > 0)
    if len(rows) > k > 0:
        kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
        rows = rows[scores[rows] >= kth]
    return rows


def _best_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` best positive scores, best first, ties by row (= row key order)."""
    rows = _rows_at_least_kth(scores, k)
    order = np.lexsort((rows, -scores[rows]))
    return rows[order][: max(k, 0)]
