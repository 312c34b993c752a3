"""Time in text: the dates a question asks about, and the time expressions of a memory
resolved against the memory's own date ("last week" said on 5 May 2022 -> 25 April-1 May).

Pure functions on strings and ``datetime.date``; the batch forms (``memory_spans_batch``)
take one anchor date per text. Month names count capitalised, or in lower case when written in
full ("in july"); a lower-case "may" only where it cannot be the verb ("may 5", "in may").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import lru_cache

from linkmem.rank.shorthand import TIME_FORMS

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"Sept": 9}
_CAPITALISED = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
#: Month names in lower case (chat messages, typed questions): written out in full; "may"
#: only with a day or a year beside it (``_MONTH_RE``) or after "in", "since", "during",
#: "until", "early", "late" or "mid", not after the other lead words of ``_LEAD_MONTH_RE``
#: ("this may help", "and may be late").
_LOWER = "january|february|march|april|june|july|august|september|october|november|december"
_MONTH_RE = rf"(?P<m>{_CAPITALISED}|(?:{_LOWER}|may)\b)"
_LEAD_MONTH_RE = rf"(?P<m>{_CAPITALISED}|(?:{_LOWER})\b)"
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAY_RE = f"(?P<wd>{'|'.join(_WEEKDAYS)})"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
_NUMBER_WORDS = (
    r"\d{1,2}|a couple(?: of)?|couple of|a few|few|several|an?|one|two|three|four|five|six"
    r"|seven|eight|nine|ten|eleven|twelve"
)
_NUMBER_RE = f"(?P<n>{_NUMBER_WORDS})"
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}
_ANY_YEAR = 2000  # a leap year: the stand-in year of a question's "in May" (any year)
_FAR = timedelta(days=3650)


@dataclass(frozen=True)
class Span:
    """Days from ``start`` to ``end``, both included. ``any_year``: the month and days
    matter, not the year (a question's "in May")."""

    start: date
    end: date
    any_year: bool = False

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def day(d: date) -> Span:
    return Span(d, d)


def month_span(year: int, month: int) -> Span:
    start = date(year, month, 1)
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return Span(start, nxt - timedelta(days=1))


def overlap_share(query: Span, span: Span) -> float:
    """The share of ``span``'s days that fall in ``query`` (0..1): how sure it is that what
    a memory dates by ``span`` happened in the question's range."""
    if not query.any_year:
        return _overlap_days(query, span) / span.days
    best = 0
    for year in {span.start.year, span.end.year}:
        best = max(best, _overlap_days(_in_year(query, year), span))
    return best / span.days


def _overlap_days(a: Span, b: Span) -> int:
    return max(0, (min(a.end, b.end) - max(a.start, b.start)).days + 1)


def _in_year(query: Span, year: int) -> Span:
    """``query`` (written in the stand-in year) moved to ``year``."""
    start, end = query.start, query.end
    return Span(
        _move(start, year + start.year - _ANY_YEAR), _move(end, year + end.year - _ANY_YEAR)
    )


def _move(d: date, year: int) -> date:
    return (
        date(year, d.month, min(d.day, 28)) if (d.month, d.day) == (2, 29) else d.replace(year=year)
    )


# --- parsing dates written out -------------------------------------------------------------

_SESSION_DATE = re.compile(r"(?P<d>\d{1,2})(?:st|nd|rd|th)? " + _MONTH_RE + r",? (?P<y>\d{4})")


def parse_date(value: str | date | datetime | float | int | None) -> date | None:
    """A date from an ISO-8601 string, a LoCoMo-style "1:14 pm on 25 May, 2023", a
    datetime/date or epoch seconds; None when there is none."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value)).date()
    text = str(value).strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    found = _absolute_dates(text, None)
    return found[0][2].start if found and found[0][2].days == 1 else None


def _month(name: str) -> int:
    name = name.capitalize()
    return _MONTH_ABBR[name.rstrip(".")[:4] if name.startswith("Sept") else name[:3]]


def _safe_date(year: int, month: int, day_: int) -> date | None:
    try:
        return date(year, month, day_)
    except ValueError:
        return None


_DAY_MONTH = r"(?P<d>\d{1,2})(?:st|nd|rd|th)? (?:of )?" + _MONTH_RE
_MONTH_DAY = _MONTH_RE + r" (?P<d>\d{1,2})(?:st|nd|rd|th)?(?![\d:])"
_YEAR = r"(?P<y>(?:19|20)\d{2})\b"
#: Most specific first: a position already covered by an earlier pattern is skipped.
_ABSOLUTE = [
    re.compile(r"\b(?P<y>(?:19|20)\d{2})-(?P<mo>\d{2})-(?P<d>\d{2})\b"),
    re.compile(r"\b" + _DAY_MONTH + r",? ?" + _YEAR),
    re.compile(r"\b" + _MONTH_DAY + r",? ?" + _YEAR),
    re.compile(r"\b" + _MONTH_RE + r",? (?:of )?" + _YEAR),
    re.compile(r"\b" + _DAY_MONTH + r"\b"),
    re.compile(r"\b" + _MONTH_DAY + r"\b"),
    re.compile(
        r"(?i:\b(?:in|since|during|of|by|until|from|early|late|mid-?|this|last|next|before|"
        r"after|around|between|and|whole|month) )" + _LEAD_MONTH_RE + r"\b"
    ),
    re.compile(r"(?i:\b(?:in|since|during|until|early|late|mid-?) )(?P<m>may)\b"),
    re.compile(r"(?i:\b(?:in|since|during|of|by|until|from|year|early|late|mid-?) )" + _YEAR),
]


def _absolute_dates(text: str, year: int | None) -> list[tuple[int, int, Span]]:
    """Dates written out, as (start, end, span); a date without a year is in ``year``, or
    any year when ``year`` is None."""
    found: list[tuple[int, int, Span]] = []
    for pattern in _ABSOLUTE:
        for m in pattern.finditer(text):
            if any(s <= m.start("m" if "m" in m.groupdict() else "y") < e for s, e, _ in found):
                continue
            span = _span_of(m.groupdict(), year)
            if span is not None:
                found.append((m.start(), m.end(), span))
    return sorted(found, key=lambda f: f[0])


def _span_of(g: dict[str, str | None], year: int | None) -> Span | None:
    any_year = g.get("y") is None and year is None
    y = int(g["y"]) if g.get("y") else (year or _ANY_YEAR)
    if g.get("m") is None and g.get("mo") is None:
        return Span(date(y, 1, 1), date(y, 12, 31))
    month = int(str(g["mo"])) if g.get("mo") else _month(str(g["m"]))
    if not 1 <= month <= 12:
        return None
    if g.get("d"):
        d = _safe_date(y, month, int(str(g["d"])))
        return None if d is None else Span(d, d, any_year)
    return replace(month_span(y, month), any_year=any_year)


# --- a memory's time expressions, resolved against its date --------------------------------


def _weekday_before(anchor: date, weekday: int) -> date:
    return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)


def _weekday_after(anchor: date, weekday: int) -> date:
    return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)


def _week_of(d: date) -> Span:
    monday = d - timedelta(days=d.weekday())
    return Span(monday, monday + timedelta(days=6))


def _weekend_before(anchor: date) -> Span:
    saturday = _weekday_before(anchor, 5)
    return Span(saturday, saturday + timedelta(days=1))


def _shift(anchor: date, n: int, unit: str) -> Span:
    """``n`` units from ``anchor`` (negative: back), as wide as the unit is vague."""
    if unit == "day":
        return day(anchor + timedelta(days=n))
    if unit == "week":
        mid = anchor + timedelta(days=7 * n)
        return Span(mid - timedelta(days=3), mid + timedelta(days=3))
    if unit == "weekend":
        first = _weekend_before(anchor) if n < 0 else _weekend_before(anchor + timedelta(days=7))
        step = timedelta(days=7 * (n + 1 if n < 0 else n - 1))
        return Span(first.start + step, first.end + step)
    if unit == "month":
        index = anchor.year * 12 + anchor.month - 1 + n
        return month_span(index // 12, index % 12 + 1)
    return Span(date(anchor.year + n, 1, 1), date(anchor.year + n, 12, 31))


def _number(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _NUMBERS.get(text, 1)


def _relative(m: re.Match[str], anchor: date) -> Span | None:
    word = m.group(0).lower()
    fixed = {"yesterday": -1, "last night": -1, "today": 0, "tonight": 0, "tomorrow": 1,
             "this morning": 0, "this afternoon": 0, "this evening": 0, "earlier today": 0,
             "the day before yesterday": -2, "the day after tomorrow": 2}  # fmt: skip
    if word in fixed:
        return day(anchor + timedelta(days=fixed[word]))
    if word == "the other day":
        return Span(anchor - timedelta(days=7), anchor - timedelta(days=1))
    return None


def _ago(m: re.Match[str], anchor: date) -> Span:
    n = _number(m.group("n"))
    back = m.group("dir").lower() in ("ago", "back")
    return _shift(anchor, -n if back else n, m.group("unit").lower())


def _named_period(m: re.Match[str], anchor: date) -> Span | None:
    which, unit = m.group("which").lower(), m.group("unit").lower()
    step = -1 if which in ("last", "past", "this past") else (1 if which == "next" else 0)
    if unit in _SEASONS:
        first, last = _SEASONS[unit]
        year = anchor.year + step
        return Span(date(year, first, 1), month_span(year, last).end)
    if unit == "week":
        return _week_of(anchor + timedelta(days=7 * step))
    if unit == "weekend":
        if step < 0:
            return _weekend_before(anchor)
        saturday = _weekday_after(anchor - timedelta(days=1), 5)
        saturday += timedelta(days=7 * step)
        return Span(saturday, saturday + timedelta(days=1))
    return _shift(anchor, step, unit)


def _weekday(m: re.Match[str], anchor: date) -> Span:
    weekday = _WEEKDAYS.index(m.group("wd").lower())
    if m.group("which").lower() in ("next", "this", "this coming", "coming"):
        return day(_weekday_after(anchor - timedelta(days=1), weekday))
    return day(_weekday_before(anchor, weekday))


def _day_of_month(m: re.Match[str], anchor: date) -> Span | None:
    d = _safe_date(anchor.year, anchor.month, int(m.group("d")))
    return None if d is None else day(d)


_Resolve = Callable[[re.Match[str], date], Span | None]
_UNITS = ("day", "week", "month", "year")
#: Each pattern, the words it needs (a text without them is not searched: regular
#: expressions are the cost of the time signal) and how it resolves.
_RELATIVE: list[tuple[re.Pattern[str], tuple[str, ...], _Resolve]] = [
    (re.compile(r"\b(?:the day before yesterday|the day after tomorrow|yesterday|last night"
                r"|today|tonight|tomorrow"
                r"|this (?:morning|afternoon|evening)|earlier today|the other day)\b", re.I),
     ("yesterday", "night", "today", "tomorrow", "this ", "other day"), _relative),
    (re.compile(r"\b" + _NUMBER_RE + r" (?P<unit>day|week|weekend|month|year)s? "
                r"(?P<dir>ago|back)\b", re.I), ("ago", "back"), _ago),
    (re.compile(r"\b(?P<dir>in) " + _NUMBER_RE + r" (?P<unit>day|week|month|year)s?\b", re.I),
     _UNITS, _ago),
    (re.compile(r"\b(?P<which>this past|last|past|next|this) (?P<unit>week|weekend|month|year"
                r"|spring|summer|fall|autumn)\b", re.I), ("last ", "past ", "next ", "this "),
     _named_period),
    (re.compile(r"\b(?P<which>this past|last|next|this coming|coming|this|on) " + _WEEKDAY_RE
                + r"\b", re.I), ("day",), _weekday),
    (re.compile(r"\bon the (?P<d>\d{1,2})(?:st|nd|rd|th)\b", re.I), ("on the ",), _day_of_month),
]  # fmt: skip
#: A weekday cut short after "last", "next" or "coming" ("next fri"; not "this sat on").
_SHORT_WEEKDAYS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
                   "fri": 4, "sat": 5, "sun": 6}  # fmt: skip
_SHORTHAND_WORD = rf"(?P<word>{'|'.join(TIME_FORMS)})"
_SHORT_WEEKDAY = rf"(?P<which>last|next|coming) (?P<wd>{'|'.join(_SHORT_WEEKDAYS)})"
_SHORTHAND_RE = re.compile(rf"\b(?:{_SHORTHAND_WORD}|{_SHORT_WEEKDAY})\b", re.I)
#: What a text needs before ``_SHORTHAND_RE`` is run on it (lower case).
_SHORTHAND_NEEDS = ("yday", "yest", "tmr", "2mo", "nite", "2day", "wk", "mos", "mth", "yr",
                    "last ", "next ", "coming ")  # fmt: skip


def _spelt_out(text: str) -> str:
    """``text`` with chat shorthand for days, units (``shorthand.TIME_FORMS``) and weekdays
    written out ("yday", "2 wks ago", "last fri")."""
    lower = text.lower()
    if not any(w in lower for w in _SHORTHAND_NEEDS):
        return text
    return _SHORTHAND_RE.sub(_spell, text)


def _spell(m: re.Match[str]) -> str:
    if m.group("word"):
        return TIME_FORMS[m.group("word").lower()]
    return f"{m.group('which')} {_WEEKDAYS[_SHORT_WEEKDAYS[m.group('wd').lower()]]}"


#: What a written-out date needs: a month's name (capitalised, or in full) or a year.
_WRITTEN = (*{m[:3] for m in _MONTHS}, *(m.lower() for m in _MONTHS), "19", "20")


def memory_spans(text: str, anchor: date) -> list[Span]:
    """The days the time expressions of ``text`` point at, said on ``anchor`` ("two weeks
    ago", "last Friday", "next month", "on the 15th", "May 25", "in 2022"; typed in chat
    shorthand too: "yday", "2 wks ago", "next fri"). The memory's own date is not included."""
    return list(_memory_spans(text, anchor))


@lru_cache(maxsize=16384)  # a scope's memories come back search after search
def _memory_spans(text: str, anchor: date) -> tuple[Span, ...]:
    spans: list[Span] = []
    if any(w in text for w in _WRITTEN):
        spans = [span for _, _, span in _absolute_dates(text, anchor.year)]
    text = _spelt_out(text)
    lower = text.lower()
    for pattern, needs, resolve in _RELATIVE:
        if any(w in lower for w in needs):
            for m in pattern.finditer(text):
                span = resolve(m, anchor)
                if span is not None:
                    spans.append(span)
    return tuple(spans)


def memory_spans_batch(texts: Sequence[str], anchors: Sequence[date | None]) -> list[list[Span]]:
    """``memory_spans`` per text; a text with no anchor keeps only its written-out dates."""
    out = []
    for text, anchor in zip(texts, anchors, strict=True):
        if anchor is None:
            out.append([s for _, _, s in _absolute_dates(text, None) if not s.any_year])
        else:
            out.append(memory_spans(text, anchor))
    return out


# --- the dates a question asks about --------------------------------------------------------

_BETWEEN = re.compile(r"\bbetween (?P<a>.+?) and (?P<b>.+?)(?=[?.!;]|$)", re.I)
_PART_OF = re.compile(
    r"\b(?:the )?(?P<part>beginning|start|early|middle|mid|end|late|first half|second half"
    r"|first week|second week|third week|fourth week|last week)(?: of|-)? ?$", re.I,
)  # fmt: skip
_PARTS = {"beginning": (1, 10), "start": (1, 10), "early": (1, 10), "middle": (11, 20),
          "mid": (11, 20), "end": (21, 31), "late": (21, 31), "first half": (1, 15),
          "second half": (16, 31), "first week": (1, 7), "second week": (8, 14),
          "third week": (15, 21), "fourth week": (22, 28), "last week": (22, 31)}  # fmt: skip
_BEFORE = re.compile(
    r"\b(?:(?:the|last) )?(?:(?:(?P<n>" + _NUMBER_WORDS + r") )?(?P<unit>day|week|weekend)s?"
    r"|" + _WEEKDAY_RE + r") (?:before|prior to|on) $", re.I,
)  # fmt: skip
_OPEN = re.compile(r"\b(?P<dir>by|until|before|after|since) $", re.I)
_SEASON_YEAR = re.compile(r"\b(?P<s>spring|summer|fall|autumn|winter) (?:of )?" + _YEAR, re.I)


def query_span(text: str, today: date | None = None) -> Span | None:
    """The days a question asks about ("between August 11 and August 15 2023", "in April
    2022", "the week before 16 November 2023", "on the Sunday before October 25, 2022",
    "in May" for any year), or None when it names no date. With ``today``, a question that
    names no date but a relative one asks about the days that points at from ``today``
    ("What did I say yesterday?", "... last week", "... three days ago")."""
    between = _BETWEEN.search(text)
    if between:
        span = _between(between.group("a"), between.group("b"))
        if span is not None:
            return span
    season = _SEASON_YEAR.search(text)
    if season and season.group("s").lower() in _SEASONS:
        first, last = _SEASONS[season.group("s").lower()]
        year = int(season.group("y"))
        return Span(date(year, first, 1), month_span(year, last).end)
    found = _absolute_dates(text, None)
    if not found:
        relative = _memory_spans(text, today) if today is not None else ()
        return min(relative, key=lambda s: s.days) if relative else None
    start, _, span = min(found, key=lambda f: f[2].days)
    return _modified(text[:start], span)


def _between(a: str, b: str) -> Span | None:
    second = _absolute_dates(b, None)
    if not second:
        return None
    end = second[0][2]
    first = _absolute_dates(a, None if end.any_year else end.end.year)
    if not first or first[0][2].start > end.end:
        return None
    return Span(first[0][2].start, end.end, end.any_year)


def _modified(prefix: str, span: Span) -> Span:
    """``span`` narrowed or moved by the words just before it."""
    part = _PART_OF.search(prefix)
    if part and span.days >= 365:
        return _part_of_year(part.group("part").lower(), span)
    if part and span.days >= 28:
        first, last = _PARTS[part.group("part").lower()]
        start = span.start.replace(day=first)
        end = span.start.replace(day=min(last, span.end.day))
        return Span(start, end, span.any_year)
    before = _BEFORE.search(prefix)
    if before:
        return _before(before, span)
    open_ = _OPEN.search(prefix)
    if open_:
        if open_.group("dir").lower() in ("after", "since"):
            return Span(span.start, span.start + _FAR, span.any_year)
        return Span(span.end - _FAR, span.end, span.any_year)
    return span


_YEAR_PARTS = {"beginning": (1, 3), "start": (1, 3), "early": (1, 3), "middle": (5, 8),
               "mid": (5, 8), "end": (10, 12), "late": (10, 12), "first half": (1, 6),
               "second half": (7, 12)}  # fmt: skip


def _part_of_year(part: str, span: Span) -> Span:
    """ "the end of 2022": October to December; a week of a year says nothing more."""
    if part not in _YEAR_PARTS:
        return span
    first, last = _YEAR_PARTS[part]
    year = span.start.year
    return Span(date(year, first, 1), month_span(year, last).end, span.any_year)


def _before(m: re.Match[str], span: Span) -> Span:
    anchor, any_year = span.start, span.any_year
    if m.group("wd"):
        return Span(*[_weekday_before(anchor, _WEEKDAYS.index(m.group("wd").lower()))] * 2,
                    any_year)  # fmt: skip
    n, unit = _number(m.group("n") or "1"), m.group("unit").lower()
    if unit == "day":
        return Span(*[anchor - timedelta(days=n)] * 2, any_year)
    if unit == "weekend":
        found = _shift(anchor, -n, "weekend")
        return Span(found.start, found.end, any_year)
    if n == 1:
        return Span(anchor - timedelta(days=7), anchor - timedelta(days=1), any_year)
    found = _shift(anchor, -n, "week")
    return Span(found.start, found.end, any_year)


_WHEN = re.compile(
    r"^\s*(?:when\b|(?:on |in )?(?:what|which) (?:date|day|year|month|week|time|season)\b"
    r"|how long ago\b|in (?:what|which) (?:year|month)\b)|\bwhen (?:did|is|was|will|does)\b",
    re.I,
)


def is_when_question(text: str) -> bool:
    """Does the question ask for a time ("When did ...", "What year ...", "How long ago")?"""
    return _WHEN.search(text) is not None
