"""The time signal of a search: memories dated in the range a question names, and, for a
"when" question, memories that say when something happened, are moved up.

A memory's date is its ``created_at`` (``add(..., timestamp=...)`` sets it); its time
expressions ("two weekends ago", "last year") are resolved against that date
(``linkmem.rank.dates``), and a question's against today ("What did I say yesterday?").
Queries that name no date and ask no "when" are not touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Protocol

from linkmem.config import RetrievalConfig
from linkmem.rank.dates import (
    Span,
    day,
    is_when_question,
    memory_spans,
    overlap_share,
    parse_date,
    query_span,
)

Ranked = list[tuple[str, float]]


class Dated(Protocol):
    """What the time signal reads of a memory (a ``MemoryRecord`` has it)."""

    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def created_at(self) -> str | None: ...


@dataclass(frozen=True)
class QueryTime:
    """What a question asks about time: a range of days, and/or "when"."""

    span: Span | None
    when: bool


def query_time(query: str, today: date | None = None) -> QueryTime | None:
    """The question's time, or None when it names no date and asks no "when". A relative
    date ("yesterday", "last week") counts from ``today``, by default the current UTC date,
    the calendar of the memories' ``created_at``."""
    today = today or datetime.now(UTC).date()
    span, when = query_span(query, today), is_when_question(query)
    return None if span is None and not when else QueryTime(span, when)


def time_boosts(
    asked: QueryTime, records: Iterable[Dated], config: RetrievalConfig
) -> dict[str, float]:
    """Each memory's time boost (0 when none; before the division by ``max_score``); the
    weights are ``config.time_*`` (measurements there)."""
    out = {}
    for record in records:
        anchor = parse_date(record.created_at)
        spans = memory_spans(record.text, anchor) if anchor is not None else []
        boost = config.time_when_weight if asked.when and spans else 0.0
        if asked.span is not None:
            own = overlap_share(asked.span, day(anchor)) if anchor is not None else 0.0
            said = max((overlap_share(asked.span, s) for s in spans), default=0.0)
            boost += config.time_range_weight * own + config.time_mention_weight * said
        if boost:
            out[record.id] = boost
    return out


def rescore_by_time(
    query: str,
    scored: Ranked,
    get_memories: Callable[[Sequence[str]], Sequence[Dated]],
    config: RetrievalConfig,
) -> tuple[Ranked, dict[str, float]]:
    """``scored`` (fused scores, best first) with each memory's time boost added (scaled by
    ``max_score`` as fusion scales its parts; only the first ``config.time_depth`` are read),
    best first again, and the boosts (before the scaling, as ``ScoreParts`` shows the other
    boosts); unchanged when the query asks nothing about time."""
    asked = query_time(query)
    if asked is None:
        return scored, {}
    return rescore_asked(asked, scored, get_memories, config)


def rescore_asked(
    asked: QueryTime,
    scored: Ranked,
    get_memories: Callable[[Sequence[str]], Sequence[Dated]],
    config: RetrievalConfig,
) -> tuple[Ranked, dict[str, float]]:
    """``rescore_by_time`` of a question whose time is ``asked`` (``query_time``: a search
    reads it before the query's vector)."""
    if not scored:
        return scored, {}
    head, tail = scored[: config.time_depth], scored[config.time_depth :]
    boosts = time_boosts(asked, get_memories([mid for mid, _ in head]), config)
    if not boosts:
        return scored, {}
    max_score = config.max_score  # a property: computed once, not per result
    out = [(mid, min(1.0, s + boosts.get(mid, 0.0) / max_score)) for mid, s in head]
    out.sort(key=lambda item: -item[1])
    return out + tail, boosts
