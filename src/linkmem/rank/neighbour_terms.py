"""Neighbour words for the keyword index: each memory's BM25 document also carries the terms
of the memories written beside it in the same call (BM25F-like), at a weight.

Memories written in one call are a conversation in order (as for the search vectors of
``linkmem.rank.context``): a reply ("Thanks! It was made for a local church") is found by the
words of the message it answers. Memory ``i`` takes, from each neighbour ``j`` within
``window`` on either side, ``w_ij`` times each term count of ``j``, where ``w_ij`` is
``weight``, scaled down by ``min(1, length_ratio * len_i / len_j)`` when ``length_ratio`` is
set: a short turn beside a long answer then takes a short part of its words, so the answer's
length does not drown the turn's own terms. The BM25 term frequency of a document is then
its own count plus its context weight, and its length its own length plus the sum of its
context weights (``linkmem.rank.bm25``).

Context weights are kept as integers in units of ``1 / CONTEXT_SCALE`` so that every store
adds and subtracts them exactly (document lengths and scope totals stay auditable sums).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

#: Context weights are stored as integers in units of 1 / CONTEXT_SCALE.
CONTEXT_SCALE = 1000


def neighbour_weight(own_len: int, other_len: int, weight: float, length_ratio: float) -> float:
    """How much of neighbour ``other``'s term counts a memory of ``own_len`` terms takes."""
    if length_ratio <= 0 or other_len <= 0:
        return weight
    return weight * min(1.0, length_ratio * own_len / other_len)


def context_terms(
    docs: Sequence[Sequence[str]],
    window: int,
    weight: float,
    length_ratio: float = 0.0,
    rows: range | None = None,
) -> list[dict[str, int]]:
    """For each document of ``rows`` (default: all) of the ordered batch ``docs``, its
    neighbours' terms as ``{term: weight in 1/CONTEXT_SCALE units}`` (zero weights dropped).
    A batch of one, ``window`` 0 or ``weight`` 0 gives empty contexts."""
    rows = range(len(docs)) if rows is None else rows
    if window <= 0 or weight <= 0 or len(docs) < 2:
        return [{} for _ in rows]
    counts: dict[int, Counter[str]] = {}

    def count(j: int) -> Counter[str]:
        if j not in counts:
            counts[j] = Counter(docs[j])
        return counts[j]

    out = []
    for i in rows:
        context: dict[str, float] = {}
        for j in range(max(0, i - window), min(len(docs), i + window + 1)):
            w = neighbour_weight(len(docs[i]), len(docs[j]), weight, length_ratio)
            if j == i or w <= 0:
                continue
            for term, tf in count(j).items():
                context[term] = context.get(term, 0.0) + w * tf
        out.append({t: n for t, x in context.items() if (n := round(x * CONTEXT_SCALE)) > 0})
    return out
