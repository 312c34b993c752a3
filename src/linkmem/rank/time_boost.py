"""The time signal of a search: memories dated in the range a question names, and, for a
"when" question, memories that say when something happened, are moved up.

A memory's date is its ``created_at`` (``add(..., timestamp=...)`` sets it); its time
expressions ("two weekends ago", "last year") are resolved against that date
(``linkmem.rank.dates``). Queries that name no date and ask no "when" are not touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from linkmem.rank.dates import (
    Span,
    day,
    is_when_question,
    memory_spans,
    overlap_share,
    parse_date,
    query_span,
)
from linkmem.types import MemoryRecord

#: Added (before the division by ``max_score``) to a memory whose own date is in the range
#: the question names ("in April 2022", "between August 11 and August 15 2023"). Measured on
#: the LoCoMo dev split with ``benchmarks/time_replay.py`` (neighbour words in BM25), full
#: recall@10 temporal / categories 1-4 (worst of 5 folds): none 0.864 (0.740) / 0.773
#: (0.738); 0.1 0.882 / 0.787; 0.2 0.894 (0.766) / 0.798 (0.773).
RANGE_WEIGHT = 0.2
#: Times the largest share of a time expression's days in that range ("dyed my hair last
#: week" said on 5 May 2022 is 6/7 in April 2022). 0.2 alone: temporal 0.908 (0.830); with
#: RANGE_WEIGHT 0.2: 0.921 (0.856), 1-4 0.803 (0.778); 0.3 + 0.3 the same.
MENTION_WEIGHT = 0.2
#: Added to a memory with a time expression when the question asks "when" (or "what year",
#: "how long ago"). With both weights above: 0.05 -> temporal 0.925 (0.856), 0.1 -> 0.938
#: (0.889), 1-4 0.808 (0.781); no category and no fold falls. Synthetic set temporal 0.861
#: -> 1.000.
WHEN_WEIGHT = 0.1
#: Only the fused ranking's first this many memories are read and re-scored (boosts only
#: raise them, so the rest stay below). Replay: 200 equals re-scoring every memory; 100
#: temporal 0.929 (0.881); 50 0.911 (0.838).
TIME_DEPTH = 200

Ranked = list[tuple[str, float]]


@dataclass(frozen=True)
class QueryTime:
    """What a question asks about time: a range of days, and/or "when"."""

    span: Span | None
    when: bool


def query_time(query: str) -> QueryTime | None:
    """The question's time, or None when it names no date and asks no "when"."""
    span, when = query_span(query), is_when_question(query)
    return None if span is None and not when else QueryTime(span, when)


def time_boosts(asked: QueryTime, records: Iterable[MemoryRecord]) -> dict[str, float]:
    """Each memory's time boost (0 when none; before the division by ``max_score``)."""
    out = {}
    for record in records:
        anchor = parse_date(record.created_at)
        spans = memory_spans(record.text, anchor) if anchor is not None else []
        boost = WHEN_WEIGHT if asked.when and spans else 0.0
        if asked.span is not None:
            own = overlap_share(asked.span, day(anchor)) if anchor is not None else 0.0
            said = max((overlap_share(asked.span, s) for s in spans), default=0.0)
            boost += RANGE_WEIGHT * own + MENTION_WEIGHT * said
        if boost:
            out[record.id] = boost
    return out


def rescore_by_time(
    query: str,
    scored: Ranked,
    get_memories: Callable[[Sequence[str]], list[MemoryRecord]],
    max_score: float,
) -> tuple[Ranked, dict[str, float]]:
    """``scored`` (fused scores, best first) with each memory's time boost added (scaled by
    ``max_score`` as fusion scales its parts), best first again, and the boosts (before the
    scaling, as ``ScoreParts`` shows the other boosts); unchanged when the query asks
    nothing about time."""
    asked = query_time(query)
    if asked is None or not scored:
        return scored, {}
    head, tail = scored[:TIME_DEPTH], scored[TIME_DEPTH:]
    boosts = time_boosts(asked, get_memories([mid for mid, _ in head]))
    if not boosts:
        return scored, {}
    out = [(mid, min(1.0, s + boosts.get(mid, 0.0) / max_score)) for mid, s in head]
    out.sort(key=lambda item: -item[1])
    return out + tail, boosts
