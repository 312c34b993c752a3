"""BM25 as pure formulas, shared by every backend and by the tests that check SQL against it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

#: Term-frequency saturation and length normalisation: the standard Okapi values, used by
#: every backend's keyword index (they are properties of the index, not of one query).
K1 = 1.2
B = 0.75


def idf(n_docs: int, doc_freq: int) -> float:
    """Okapi IDF, kept positive: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def term_score(
    tf: float, doc_len: float, avg_len: float, idf_value: float, k1: float, b: float
) -> float:
    norm = k1 * (1.0 - b + b * doc_len / avg_len) if avg_len > 0 else k1
    return idf_value * tf * (k1 + 1.0) / (tf + norm)


def score_document(
    doc_terms: Mapping[str, float],
    doc_len: float,
    query: Sequence[str],
    idfs: Mapping[str, float],
    avg_len: float,
    k1: float = K1,
    b: float = B,
) -> float:
    """BM25 of one document (its term counts) for the unique ``query`` terms. With context
    terms (``linkmem.rank.neighbour_terms``) a count is the term's own count plus its context
    weight, and ``doc_len`` the own length plus the context weights' sum."""
    return sum(
        term_score(doc_terms[t], doc_len, avg_len, idfs[t], k1, b)
        for t in query
        if doc_terms.get(t)
    )


def squash(
    raw: float, n_terms: int, midpoint_base: float, per_term: float, cap: int, steepness: float
) -> float:
    """Map a raw BM25 score to 0..1 with a sigmoid whose midpoint and steepness follow the
    number of query terms; 0 stays 0 (no keyword match means no keyword score)."""
    return squasher(n_terms, midpoint_base, per_term, cap, steepness)(raw)


def squasher(
    n_terms: int, midpoint_base: float, per_term: float, cap: int, steepness: float
) -> Squasher:
    """``squash`` for one query's number of terms: its sigmoid set up once for every result."""
    n = max(1, n_terms)
    return Squasher(midpoint_base + per_term * min(n, cap), steepness / math.sqrt(n))


class Squasher:
    """``squash`` with one query's midpoint and slope; ``many`` squashes an array."""

    def __init__(self, midpoint: float, slope: float) -> None:
        self.midpoint = midpoint
        self.slope = slope

    def __call__(self, raw: float) -> float:
        if raw <= 0.0:
            return 0.0
        return 1.0 / (1.0 + math.exp(-self.slope * (raw - self.midpoint)))

    def many(self, raw: np.ndarray) -> np.ndarray:
        """This squash of each of ``raw`` (float64): the same float operations, the exponential
        by ``math.exp`` (numpy's may differ in the last bit), so each value is ``self(r)``'s."""
        out = np.zeros(len(raw), dtype=np.float64)
        positive = np.flatnonzero(raw > 0.0)
        if len(positive):
            exponents = (-self.slope * (raw[positive] - self.midpoint)).tolist()
            exps = np.fromiter(map(math.exp, exponents), np.float64, len(positive))
            out[positive] = 1.0 / (1.0 + exps)
        return out
