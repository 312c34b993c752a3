from datetime import UTC, date, datetime

import pytest

from linkmem.rank.dates import (
    Span,
    day,
    is_when_question,
    memory_spans,
    memory_spans_batch,
    overlap_share,
    parse_date,
    query_span,
)

THU = date(2022, 5, 5)  # a Thursday


def span(a: str, b: str | None = None, any_year: bool = False) -> Span:
    return Span(date.fromisoformat(a), date.fromisoformat(b or a), any_year)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where was John between August 11 and August 15 2023?", span("2023-08-11", "2023-08-15")),
        ("Where was Tim in the week before 16 November 2023?", span("2023-11-09", "2023-11-15")),
        ("What did Nate undergo in April 2022?", span("2022-04-01", "2022-04-30")),
        ("What did Maria do last weekend before April 10, 2023?", span("2023-04-08", "2023-04-09")),
        ("What did Joanna finish last Friday on 23 January, 2022?", span("2022-01-21")),
        ("Her puppy she got two weeks before August 11, 2023?", span("2023-07-25", "2023-07-31")),
        ("What was shown on the Sunday before October 25, 2022?", span("2022-10-23")),
        ("Which tournament in the beginning of November 2022?", span("2022-11-01", "2022-11-10")),
        ("What state did Joanna visit in summer 2021?", span("2021-06-01", "2021-08-31")),
        ("The picture shared on December 1,2023?", span("2023-12-01")),
        ("What book did Tim finish on 8th December, 2023?", span("2023-12-08")),
        ("Which spot did Joanna visit in May?", span("2000-05-01", "2000-05-31", any_year=True)),
        ("What did John organize in 2024?", span("2024-01-01", "2024-12-31")),
        ("Was the first half of September 2022 good?", span("2022-09-01", "2022-09-15")),
        ("What did Ana do at the end of 2022?", span("2022-10-01", "2022-12-31")),
        ("What did Ana buy on 2023-06-05?", span("2023-06-05")),
        ("What did Sam do in mid-March 2023?", span("2023-03-11", "2023-03-20")),
        ("What did Ana cook the day before 3 March 2023?", span("2023-03-02")),
        ("What did Ana do three days before June 10, 2023?", span("2023-06-07")),
        ("What did Ana do on Jun 5th, 2023?", span("2023-06-05")),
        # typed in lower case: month names in full, "may" where it cannot be the verb
        ("what did nate undergo in april 2022?", span("2022-04-01", "2022-04-30")),
        ("where was john between august 11 and august 15 2023?", span("2023-08-11", "2023-08-15")),
        ("which country in the second week of november?", span("2000-11-08", "2000-11-14", True)),
        ("which spot did joanna visit in may?", span("2000-05-01", "2000-05-31", any_year=True)),
        ("what happened on 5 may 2023?", span("2023-05-05")),
    ],
)
def test_query_span(question: str, expected: Span) -> None:
    assert query_span(question) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I say yesterday?", span("2022-05-04")),
        ("what did we plan for tmrw", span("2022-05-06")),
        ("Where did I go last week?", span("2022-04-25", "2022-05-01")),
        ("What did Ana cook three days ago?", span("2022-05-02")),
        ("What did Ana do last weekend before April 10, 2023?", span("2023-04-08", "2023-04-09")),
    ],
)
def test_query_span_counts_relative_dates_from_today(question: str, expected: Span) -> None:
    assert query_span(question, THU) == expected


def test_query_span_reads_relative_dates_only_given_today() -> None:
    assert query_span("What did I say yesterday?") is None


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie paint a sunrise?",
        "May I ask what Max eats?",
        "Who is Max?",
        "may i ask what max eats?",
        "did this may help, and may it last?",
        "what did you make of the jan sale?",
    ],
)
def test_query_without_a_date(question: str) -> None:
    assert query_span(question) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dyed my hair last week", span("2022-04-25", "2022-05-01")),
        ("camping with my fam two weekends ago", span("2022-04-23", "2022-04-24")),
        ("last year at the Pride fest", span("2021-01-01", "2021-12-31")),
        ("I went yesterday", span("2022-05-04")),
        ("see you tomorrow", span("2022-05-06")),
        ("we met 3 days ago", span("2022-05-02")),
        ("it happened last Saturday", span("2022-04-30")),
        ("next Friday works", span("2022-05-06")),
        ("on the 15th we met", span("2022-05-15")),
        ("next month we move", span("2022-06-01", "2022-06-30")),
        ("back in May 2019", span("2019-05-01", "2019-05-31")),
        ("born on June 3rd", span("2022-06-03")),
        ("the invoice of 2021-11-30 is paid", span("2021-11-30")),
        ("a few weeks ago", span("2022-04-11", "2022-04-17")),
        ("we went camping in july", span("2022-07-01", "2022-07-31")),
        ("we met two weeks back", span("2022-04-18", "2022-04-24")),
        ("the day after tomorrow", span("2022-05-07")),
        ("back in may 2019", span("2019-05-01", "2019-05-31")),
        ("born on june 3rd", span("2022-06-03")),
        # chat shorthand
        ("went there yday", span("2022-05-04")),
        ("see u tmrw!", span("2022-05-06")),
        ("we met 2 wks ago", span("2022-04-18", "2022-04-24")),
        ("last wknd was fun", span("2022-04-30", "2022-05-01")),
        ("next fri works", span("2022-05-06")),
        ("joined the group last Tues", span("2022-05-03")),
        ("moved here 3 mos ago", span("2022-02-01", "2022-02-28")),
    ],
)
def test_memory_spans(text: str, expected: Span) -> None:
    assert memory_spans(text, THU) == [expected]


def test_memory_without_time_expressions() -> None:
    assert memory_spans("I may adopt a dog named Max", THU) == []
    assert memory_spans("this may help, and may be fun", THU) == []
    assert memory_spans("This sat on my desk; the sun was out; wait a mo", THU) == []


def test_batch_without_anchor_keeps_written_dates_only() -> None:
    out = memory_spans_batch(["yesterday", "on 3 May 2021", "in May"], [None, None, THU])
    assert out == [[], [span("2021-05-03")], [span("2022-05-01", "2022-05-31")]]


def test_overlap_share() -> None:
    april = span("2022-04-01", "2022-04-30")
    assert overlap_share(april, span("2022-04-25", "2022-05-01")) == pytest.approx(6 / 7)
    assert overlap_share(april, day(date(2022, 5, 1))) == 0.0
    assert overlap_share(april, day(date(2022, 4, 9))) == 1.0
    any_may = span("2000-05-01", "2000-05-31", any_year=True)
    assert overlap_share(any_may, day(date(2019, 5, 31))) == 1.0
    assert overlap_share(any_may, day(date(2019, 6, 1))) == 0.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:14 pm on 25 May, 2023", date(2023, 5, 25)),
        ("2023-05-25T10:00:00Z", date(2023, 5, 25)),
        ("2023-05-25", date(2023, 5, 25)),
        (datetime(2023, 5, 25, 23, 0, tzinfo=UTC), date(2023, 5, 25)),
        (date(2023, 5, 25), date(2023, 5, 25)),
        ("", None),
        ("not a date", None),
        (None, None),
    ],
)
def test_parse_date(value: object, expected: date | None) -> None:
    assert parse_date(value) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "when"),
    [
        ("When did Caroline go to the LGBTQ support group?", True),
        ("What year did John start surfing?", True),
        ("How long ago was Caroline's 18th birthday?", True),
        ("Which month was John in Italy?", True),
        ("What did Caroline research?", False),
        ("Where was John when it rained?", False),
    ],
)
def test_is_when_question(question: str, when: bool) -> None:
    assert is_when_question(question) is when
