from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from linkmem import InvalidInput
from linkmem.config import RetrievalConfig
from linkmem.rank import dates
from linkmem.rank import time_boost as tb
from linkmem.types import MemoryRecord, Scope
from linkmem.validation import validate_timestamp, validate_timestamps


def record(mid: str, text: str, created_at: str) -> MemoryRecord:
    return MemoryRecord(mid, text, Scope(user_id="u"), {}, created_at, created_at)


CONFIG = RetrievalConfig()
RECORDS = [
    record("hair", "Dyed my hair last week", "2022-05-05T10:00:00+00:00"),
    record("april", "Went to the park", "2022-04-09T10:00:00+00:00"),
    record("plain", "I love turtles", "2022-06-01T10:00:00+00:00"),
]


def test_queries_about_nothing_in_time_are_untouched():
    assert tb.query_time("What does Nate love?") is None
    scored = [("plain", 0.5), ("hair", 0.4)]
    out, boosts = tb.rescore_by_time("What does Nate love?", scored, _no_reads, CONFIG)
    assert out is scored and boosts == {}


def _no_reads(ids):
    raise AssertionError("a query without time must not read records")


def test_range_boosts_own_date_and_resolved_expressions():
    boosts = tb.time_boosts(tb.query_time("What happened in April 2022?"), RECORDS, CONFIG)
    assert boosts["april"] == pytest.approx(CONFIG.time_range_weight)
    assert boosts["hair"] == pytest.approx(CONFIG.time_mention_weight * 6 / 7)  # 25 Apr-1 May
    assert "plain" not in boosts


def test_a_relative_question_counts_from_today():
    asked = tb.query_time("What did I do last week?", today=date(2022, 5, 9))
    assert asked == tb.QueryTime(span=dates.Span(date(2022, 5, 2), date(2022, 5, 8)), when=False)
    boosts = tb.time_boosts(asked, RECORDS, CONFIG)
    assert boosts == {"hair": pytest.approx(CONFIG.time_range_weight)}  # written on 5 May


def test_relative_questions_default_to_the_current_utc_date():
    asked = tb.query_time("What did I say yesterday?")
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    assert asked is not None and asked.span == dates.day(yesterday)


def test_when_boosts_memories_with_a_time_expression():
    boosts = tb.time_boosts(tb.query_time("When did Nate dye his hair?"), RECORDS, CONFIG)
    assert boosts == {"hair": pytest.approx(CONFIG.time_when_weight)}


def test_rescore_reorders_and_keeps_scores_in_range():
    scored = [("plain", 0.5), ("hair", 0.45), ("april", 0.1)]
    out, boosts = tb.rescore_by_time(
        "Where was Nate in April 2022?", scored, lambda ids: RECORDS, CONFIG
    )
    assert [mid for mid, _ in out] == ["hair", "plain", "april"]
    assert boosts == {
        "hair": pytest.approx(CONFIG.time_mention_weight * 6 / 7),
        "april": pytest.approx(CONFIG.time_range_weight),
    }
    assert dict(out)["hair"] == pytest.approx(
        0.45 + CONFIG.time_mention_weight * 6 / 7 / CONFIG.max_score
    )
    assert all(0.0 <= s <= 1.0 for _, s in out)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-05-25T13:14:00+02:00", datetime(2023, 5, 25, 11, 14, tzinfo=UTC)),
        ("2023-05-25", datetime(2023, 5, 25, tzinfo=UTC)),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
        (1.5, datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)),
        (date(2023, 5, 25), datetime(2023, 5, 25, tzinfo=UTC)),
        (None, None),
    ],
)
def test_validate_timestamp(value, expected):
    assert validate_timestamp(value) == expected


@pytest.mark.parametrize("value", ["soon", " ", float("inf"), False, [1], b"2023-01-01", 1e300])
def test_validate_timestamp_refuses(value):
    with pytest.raises(InvalidInput, match="timestamp"):
        validate_timestamp(value)


def test_validate_timestamps_one_or_one_per_item():
    one = datetime(2020, 1, 1, tzinfo=UTC)
    assert validate_timestamps("2020-01-01", 2) == [one, one]
    assert validate_timestamps(None, 2) == [None, None]
    assert validate_timestamps([None, "2020-01-01"], 2) == [None, one]
    with pytest.raises(InvalidInput, match=r"timestamp\[1\]"):
        validate_timestamps(["2020-01-01", "nope"], 2)


def test_only_the_first_time_depth_results_are_read():
    read = []

    def get(ids):
        read.extend(ids)
        return [r for r in RECORDS if r.id in ids]

    scored = [("plain", 0.5), ("hair", 0.45), ("april", 0.1)]
    shallow = replace(CONFIG, time_depth=2)
    out, _ = tb.rescore_by_time("Where was Nate in April 2022?", scored, get, shallow)
    assert read == ["plain", "hair"] and out[-1] == ("april", 0.1)


def test_a_dated_search_reads_each_record_once(tmp_path, monkeypatch):
    """The time signal's record reads serve the results: no id is read twice."""
    from helpers import CapitalisedWordsExtractor
    from search_reads_cases import plain_reads

    from linkmem import Memory
    from linkmem.embed.fake import FakeEmbedder

    memory = Memory(
        tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
    )
    memory.add_batch(
        ["Nate: I dyed my hair last week", "Nate: I love turtles", "Joanna: a new script"],
        user_id="u",
        timestamp="2022-05-05",
    )
    read: list[str] = []
    get = memory.store.get_memories
    monkeypatch.setattr(memory.store, "get_memories", lambda ids: read.extend(ids) or get(ids))
    with plain_reads():
        hits = memory.search("What did Nate do in April 2022?", user_id="u")["results"]
    assert hits and len(read) == len(set(read))
    memory.close()
