"""The input rules of ``linkmem.validation`` (and the filter and export parsers that use them):
each bad value is ``InvalidInput`` with a message that can be printed, each bound is exact."""

from __future__ import annotations

import datetime as dt
import enum
import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from linkmem.config import resolve_settings
from linkmem.errors import InvalidInput
from linkmem.filters import MAX_FILTER_TERMS, parse_filters
from linkmem.store.transfer import check_fields, decode_vector, encode_vector
from linkmem.transfer import read_rows
from linkmem.validation import (
    INT64_MAX,
    INT64_MIN,
    MAX_NESTING,
    check_nesting,
    check_storable,
    normalise_messages,
    shown,
    validate_batch_size,
    validate_items,
    validate_memory_id,
    validate_metadata,
    validate_metadata_list,
    validate_offset,
    validate_scope_id,
    validate_text,
    validate_top_k,
)

#: An int with no decimal text (more than 4300 digits), named for pytest's test ids.
HUGE = pytest.param(10**5000, id="huge-int")
ODD_BUT_VALID = ["🐕‍🦺", "\U0010ffff", "\ufffe\uffff", "\x01\x1f\x7f\x85", "\u2028", "\ufeff", "é"]


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def refusal(check: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the InvalidInput that ``check`` raises; it must be printable."""
    with pytest.raises(InvalidInput) as raised:
        check(*args, **kwargs)
    message = str(raised.value)
    message.encode("utf-8")  # no lone surrogate came through
    assert len(message) < 400
    return message


@pytest.mark.parametrize("char", ["\x00", "\ud800", "\udbff", "\udc00", "\udfff"])
def test_nul_and_lone_surrogates_are_not_storable(char: str):
    message = refusal(check_storable, f"ab{char}c", "text")
    assert "position 2" in message and ("NUL" in message or "surrogate" in message)


@pytest.mark.parametrize("text", ODD_BUT_VALID)
def test_odd_but_valid_unicode_is_storable(text: str):
    assert check_storable(text, "text") == text
    assert validate_metadata({text: [text]}) == {text: [text]}


@pytest.mark.parametrize(
    "value", [HUGE, nested(5000), "x" * 10_000, "\ud800", {"\x00": [10**5000]}]
)
def test_shown_never_fails_never_grows_and_can_be_printed(value: Any):
    text = shown(value)
    assert len(text) <= 63
    text.encode("utf-8")


def test_nesting_is_counted_from_the_outermost_container():
    check_nesting(nested(MAX_NESTING), "metadata")
    check_nesting([[[1]]], "filters")
    assert "nested more than 32" in refusal(check_nesting, nested(MAX_NESTING + 1), "metadata")
    loop: list[Any] = []
    loop.append(loop)
    refusal(check_nesting, loop, "metadata")


@pytest.mark.parametrize(
    "metadata",
    [
        {"n": INT64_MAX + 1},
        {"n": [INT64_MIN - 1]},
        {"n": 10**5000},
        {"x": float("nan")},
        {"x": {"y": float("-inf")}},
        {"k": {1: "non-string key inside"}},
        {"k": {"a": {3, 4}}},
        {"k": b"bytes"},
        {"k\ud800": 1},
        {"k": {"\x00": 1}},
        {"": 1},
        {"agent_id": "x"},
        nested(MAX_NESTING + 1),
        "not a dict",
    ],
)
def test_metadata_outside_the_rule_is_refused(metadata: Any):
    refusal(validate_metadata, metadata)


def test_metadata_is_copied_as_plain_json_within_the_bounds():
    class Level(enum.IntEnum):
        HIGH = 3

    given = {"t": ("a", 1), "lo": INT64_MIN, "hi": INT64_MAX, "e": Level.HIGH, "f": 1.5}
    plain = validate_metadata(given)
    assert plain == {"t": ["a", 1], "lo": INT64_MIN, "hi": INT64_MAX, "e": 3, "f": 1.5}
    assert type(plain["e"]) is int
    assert validate_metadata(None) == {}
    assert validate_metadata(nested(MAX_NESTING)) == nested(MAX_NESTING)


def test_metadata_size_limit_is_exact_and_counts_utf8_bytes():
    fits = {"k": "é" * 46}  # {"k":"..."} is 8 bytes plus 2 per é: 100 bytes
    assert validate_metadata(fits, max_bytes=100) == fits
    message = refusal(validate_metadata, {"k": "é" * 47}, max_bytes=100)
    assert "102 bytes" in message and "max_metadata_bytes" in message
    assert validate_metadata({"k": "x" * 200_000}, max_bytes=None)
    refusal(validate_metadata, {"k": "x" * 70_000})  # the default, 64 KiB


def test_max_metadata_bytes_is_a_setting():
    assert resolve_settings(env={}).max_metadata_bytes == 64 * 1024
    assert resolve_settings({"max_metadata_bytes": 10}, env={}).max_metadata_bytes == 10


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (validate_top_k, 0),
        (validate_top_k, 10_001),
        (validate_top_k, True),
        (validate_top_k, 2.0),
        pytest.param(validate_top_k, 10**5000, id="top_k-huge-int"),
        (validate_offset, -1),
        (validate_offset, 1_000_000_001),
        (validate_offset, None),
        (validate_offset, "3"),
        (validate_offset, False),
        (validate_batch_size, 0),
        (validate_batch_size, 100_001),
        (validate_batch_size, 1.0),
    ],
)
def test_counts_are_ints_within_bounds(check: Any, value: Any):
    assert "must be an integer from" in refusal(check, value)


def test_count_bounds_are_accepted():
    assert validate_top_k(1) == 1 and validate_top_k(10_000) == 10_000
    assert validate_offset(0) == 0 and validate_offset(1_000_000_000) == 1_000_000_000
    assert validate_batch_size(100_000) == 100_000


def test_scope_ids_that_are_ints_stay_within_64_bits():
    assert validate_scope_id("user_id", INT64_MAX) == str(INT64_MAX)
    assert validate_scope_id("user_id", 7) == "7"
    for value in (INT64_MAX + 1, 10**5000):
        assert "64-bit" in refusal(validate_scope_id, "user_id", value)
    refusal(validate_scope_id, "user_id", "a\x00")


def test_texts_and_ids_are_storable():
    assert validate_text("  fine  ", 10) == "fine"
    refusal(validate_text, "a\x00", 10)
    refusal(validate_text, "\ud800x", 10, "query")
    assert validate_memory_id(" abc ") == "abc"
    refusal(validate_memory_id, "ab\udc00")


@pytest.mark.parametrize("items", ["hello", b"hello", {"content": "hi"}, iter(["a"]), 5, None, []])
def test_items_of_a_batch_are_a_non_empty_list(items: Any):
    refusal(validate_items, items)


def test_items_and_their_metadata():
    assert validate_items(("a", "b")) == ["a", "b"]
    assert validate_metadata_list(None, 2) == [None, None]
    assert "2 entries for 3 items" in refusal(validate_metadata_list, [None, None], 3)
    refusal(validate_metadata_list, "ab", 2)
    refusal(validate_metadata_list, {"a": 1}, 1)


@pytest.mark.parametrize(
    "message",
    [
        {"role": [], "content": "x"},
        {"role": "boss", "content": "x"},
        {"content": "x", "name": "\ud800"},
        {"content": "x", "name": "n" * 201},
        {"content": "x", "name": 5},
        {"content": "a\x00"},
    ],
)
def test_messages_outside_the_rule_are_refused(message: dict[str, Any]):
    refusal(normalise_messages, [message], 100)


def test_a_speaker_name_of_the_limit_is_kept():
    (message,) = normalise_messages({"content": "hi", "name": "n" * 200}, 100)
    assert message.name == "n" * 200


@pytest.mark.parametrize(
    "filters",
    [
        {"k\n": 1},
        {"\ud800": 1},
        {"k": "a\x00"},
        {"k": float("nan")},
        {"k": {"gt": float("inf")}},
        {"k": {"in": [1, 2**63]}},
        {"k": {"contains": 10**5000}},
        {"k": {"gte": "2024-01-01\n"}},
        {"k": {("op",): 1}},
        {"k": {"eq": {3, 4}}},
        {"k": list(range(MAX_FILTER_TERMS + 1))},
        {"AND": [{"k": i} for i in range(MAX_FILTER_TERMS + 1)]},
        {"k": {"in": list(range(300)), "nin": list(range(201))}},
    ],
)
def test_filters_outside_the_rule_are_refused(filters: dict[str, Any]):
    refusal(parse_filters, filters)


def test_filter_bounds_are_accepted():
    deepest: dict[str, Any] = {"k": 1}
    for _ in range(MAX_NESTING - 1):
        deepest = {"NOT": deepest}
    assert parse_filters(deepest) is not None
    refusal(parse_filters, {"NOT": deepest})
    assert parse_filters({"k": list(range(MAX_FILTER_TERMS))}) is not None
    assert parse_filters({"k": {"gte": dt.date(2024, 5, 1), "lt": INT64_MAX}}) is not None


def memory_row(**changes: Any) -> dict[str, Any]:
    row = {
        "type": "memory",
        "id": "m1",
        "text": "fine",
        "user_id": "alice",
        "agent_id": None,
        "run_id": None,
        "metadata": {},
        "role": "user",
        "actor_id": None,
        "created_at": "2024-05-01",
        "updated_at": "2024-05-01",
        "vector": encode_vector(np.ones(4, dtype=np.float32)),
    }
    return {**row, **changes}


@pytest.mark.parametrize("key", ["id", "text", "role", "actor_id", "created_at", "updated_at"])
def test_every_text_of_an_export_row_is_storable(key: str):
    assert check_fields(memory_row(), "row 2") == "memory"
    for bad in ("a\x00", "a\ud800"):
        assert refusal(check_fields, memory_row(**{key: bad}), "row 2").startswith("row 2")


def test_vectors_of_an_export_are_finite():
    for bad in (np.nan, np.inf):
        text = encode_vector(np.full(4, bad, dtype=np.float32))
        assert "NaN or infinity" in refusal(decode_vector, text, 4, "row 3")


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("[" * 5000, "row 1: not readable JSON"),
        ("1" * 5000, "row 1: not readable JSON"),
        (b'{"a": "\xff"}', "row 1: not readable JSON"),
        ("{nope", "row 1: not valid JSON"),
    ],
)
def test_unreadable_rows_are_invalid_input(line: str | bytes, says: str):
    assert says in refusal(list, read_rows([line]))


def test_a_file_that_is_not_utf8_or_not_gzip_is_invalid_input(tmp_path: Path):
    (tmp_path / "latin1.jsonl").write_bytes(b'{"a": "\xe9"}\n')
    with (tmp_path / "latin1.jsonl").open(encoding="utf-8") as f:
        assert "UTF-8" in refusal(list, read_rows(f))
    (tmp_path / "fake.jsonl.gz").write_bytes(b"not gzip at all\n")
    with gzip.open(tmp_path / "fake.jsonl.gz", "rt", encoding="utf-8") as f:
        refusal(list, read_rows(f))
    blank_lines = io.StringIO('\n{"a": 1}\n\n')
    assert list(read_rows(blank_lines)) == [json.loads('{"a": 1}')]
