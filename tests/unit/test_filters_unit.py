"""Filter parsing, and the SQLite compiler against the Python reference on random data."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkmem import InvalidInput
from linkmem.filters import All, AnyOf, Cond, Not, matches, parse_filters
from linkmem.store.sqlite.driver import sqlite3
from linkmem.store.sqlite.sql import filter_sql


def test_parse_shapes():
    assert parse_filters(None) is None and parse_filters({}) is None
    assert parse_filters({"a": 1}) == Cond("a", "eq", 1)
    assert parse_filters({"a": [1, 2]}) == Cond("a", "in", (1, 2))
    assert parse_filters({"a": {"gt": 1, "lt": 5}}) == All((Cond("a", "gt", 1), Cond("a", "lt", 5)))
    assert parse_filters({"OR": [{"a": 1}, {"b": 2}]}) == AnyOf(
        (Cond("a", "eq", 1), Cond("b", "eq", 2))
    )
    assert parse_filters({"NOT": {"a": 1}}) == Not(Cond("a", "eq", 1))


def test_unknown_operator_lists_the_valid_ones():
    with pytest.raises(InvalidInput, match="gte"):
        parse_filters({"a": {"greater": 1}})


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["x", "y", "Xy", "2024-01-01", "2024-06-30"]),
)
metadata = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.one_of(values, st.lists(st.sampled_from(["x", "y"]), max_size=2)),
    max_size=3,
)
leaf = st.one_of(
    st.builds(lambda k, v: {k: v}, st.sampled_from(["a", "b"]), values),
    st.builds(
        lambda k, op, v: {k: {op: v}},
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["eq", "ne"]),
        values,
    ),
    st.builds(
        lambda k, op, v: {k: {op: v}},
        st.sampled_from(["a", "b"]),
        st.sampled_from(["gt", "gte", "lt", "lte"]),
        st.one_of(st.integers(-3, 3), st.sampled_from(["2024-01-01", "2024-03-01"])),
    ),
    st.builds(
        lambda k, v: {k: {"contains": v}}, st.sampled_from(["a", "c"]), st.sampled_from(["x", "y"])
    ),
    st.builds(
        lambda k, v: {k: {"in": v}},
        st.sampled_from(["a", "b"]),
        st.lists(values, min_size=1, max_size=3),
    ),
)
filters = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda xs: {"AND": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"OR": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: {"NOT": x}, inner),
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(metadata, min_size=1, max_size=6), spec=filters)
def test_sqlite_compiler_agrees_with_python_reference(rows, spec):
    node = parse_filters(spec)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE m (i INTEGER, metadata TEXT)")
    conn.executemany(
        "INSERT INTO m VALUES (?, ?)", [(i, json.dumps(r)) for i, r in enumerate(rows)]
    )
    where, args = filter_sql(node)
    got = {i for (i,) in conn.execute(f"SELECT i FROM m WHERE {where}", args)}
    want = {i for i, r in enumerate(rows) if matches(node, r)}
    assert got == want, spec
