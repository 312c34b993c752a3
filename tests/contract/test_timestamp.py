"""Contract: ``timestamp`` on add / add_batch sets a memory's ``created_at`` (every backend and
over HTTP), a bad one writes nothing, and search reads "last week" against it, and a
question's "yesterday" against today."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from linkmem import InvalidInput


def test_add_with_an_iso_timestamp_sets_created_at(memory):
    out = memory.add("I moved to Lisbon", user_id="u", timestamp="2023-05-25T13:14:00+02:00")
    (item,) = out["results"]
    assert item["created_at"] == item["updated_at"] == "2023-05-25T11:14:00+00:00"
    assert memory.get(item["id"])["created_at"] == "2023-05-25T11:14:00+00:00"
    assert memory.history(item["id"])["results"][0]["created_at"] == "2023-05-25T11:14:00+00:00"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-05-25", "2023-05-25T00:00:00+00:00"),
        ("2023-05-25T13:14:00Z", "2023-05-25T13:14:00+00:00"),
        (1684970040, "2023-05-24T23:14:00+00:00"),
        (datetime(2023, 5, 25, 13, 14), "2023-05-25T13:14:00+00:00"),
        (datetime(2023, 5, 25, 13, 14, tzinfo=UTC), "2023-05-25T13:14:00+00:00"),
        (date(2023, 5, 25), "2023-05-25T00:00:00+00:00"),
    ],
)
def test_timestamp_forms(memory, value, expected):
    out = memory.add("a fact", user_id="u", timestamp=value)
    assert out["results"][0]["created_at"] == expected


def test_add_batch_per_item_and_for_the_call(memory):
    out = memory.add_batch(
        ["first", "second", "third"], user_id="u", timestamp=["2022-01-02", None, "2021-06-01"]
    )
    first, second, third = (r["created_at"] for r in out["results"])
    assert first.startswith("2022-01-02T00:00:00") and third.startswith("2021-06-01T00:00:00")
    assert second > "2025"  # no timestamp: now
    listed = [r["memory"] for r in memory.get_all(user_id="u")["results"]]
    assert listed == ["second", "first", "third"]  # newest first, by the given times
    out = memory.add_batch(["a", "b"], user_id="v", timestamp="2020-02-02")
    a, b = (r["created_at"] for r in out["results"])
    assert a.startswith("2020-02-02T00:00:00") and a < b  # one time, batch order kept


@pytest.mark.parametrize(
    "value", ["yesterday", "", "2023-13-01", float("nan"), True, {"at": 1}, 10**20, "0000-01-01"]
)
def test_a_bad_timestamp_writes_nothing(memory, value):
    said = "timestamp|JSON"  # RemoteMemory refuses NaN before sending, as for any argument
    with pytest.raises(InvalidInput, match=said):
        memory.add("never stored", user_id="u", timestamp=value)
    with pytest.raises(InvalidInput, match=said):
        memory.add_batch(["never", "stored"], user_id="u", timestamp=["2023-01-01", value])
    assert memory.count() == 0


def test_timestamp_count_must_match_the_items(memory):
    with pytest.raises(InvalidInput, match="2 entries for 3 items"):
        memory.add_batch(["a", "b", "c"], user_id="u", timestamp=["2023-01-01", "2023-01-02"])
    with pytest.raises(InvalidInput, match="timestamp"):
        memory.add("a", user_id="u", timestamp=["2023-01-01"])
    assert memory.count() == 0


def test_search_reads_time_against_the_memory_date(memory):
    memory.add_batch(
        ["Nate: I dyed my hair last week, it is purple now", "Nate: I changed my hair colour"],
        user_id="u",
        timestamp=["2022-05-05", "2022-09-10"],
    )
    question = "What did Nate change about his hair in April 2022?"
    results = memory.search(question, user_id="u", explain=True)["results"]
    assert results[0]["memory"].startswith("Nate: I dyed")  # "last week" of 5 May: April
    details = results[0]["score_details"]
    assert results[0]["score"] == details["score"]
    assert details["time_boost"] == pytest.approx(0.2 * 6 / 7, abs=1e-6)  # 25 Apr - 1 May
    assert results[1]["score_details"]["time_boost"] == 0.0
    plain = memory.search(question, user_id="u", signals={"time": False}, explain=True)
    top = plain["results"][0]
    assert top["score"] < results[0]["score"] and top["score_details"]["time_boost"] == 0.0


def test_search_reads_a_relative_question_against_today(memory):
    today = datetime.now(UTC).date()
    texts = ["I went running by the river", "I went running in the park", "I went running uphill"]
    ages = [1, 12, 40]  # days
    memory.add_batch(
        texts, user_id="u", timestamp=[(today - timedelta(days=n)).isoformat() for n in ages]
    )
    for question, expected in (
        ("Where did I go running yesterday?", texts[0]),
        ("Where did I go running two weeks ago?", texts[1]),
    ):
        results = memory.search(question, user_id="u", explain=True)["results"]
        assert results[0]["memory"] == expected
        assert results[0]["score_details"]["time_boost"] > 0
        assert [r["score_details"]["time_boost"] for r in results[1:]] == [0.0, 0.0]


def test_timestamp_with_infer_is_refused(memory):
    with pytest.raises(InvalidInput, match="infer=True"):
        memory.add("I moved to Lisbon", user_id="u", infer=True, timestamp="2023-01-01")
    assert memory.count() == 0
