"""Contract: metadata filters are applied inside the store query, for search and get_all."""

from __future__ import annotations

import pytest

from linkmem import InvalidInput

ROWS = [
    ("apples are red", {"n": 1, "kind": "fruit", "day": "2024-01-05", "tags": ["a", "b"]}),
    ("bananas are yellow", {"n": 2, "kind": "fruit", "day": "2024-02-10", "tags": ["b"]}),
    ("carrots are orange", {"n": 3, "kind": "vegetable", "day": "2024-03-15", "ok": True}),
    ("dates are sweet", {"n": 4.5, "kind": "Fruit", "day": "2024-04-20T10:00:00"}),
    ("eggs are breakfast", {"kind": None, "note": "Free Range"}),
]


@pytest.fixture
def food(memory):
    memory.add_batch([t for t, _ in ROWS], user_id="u", metadata=[m for _, m in ROWS])
    return memory


def listed(memory, filters):
    found = memory.get_all(user_id="u", filters=filters)["results"]
    return sorted(r["memory"].split()[0] for r in found)


def searched(memory, filters):
    found = memory.search("are", user_id="u", filters=filters, top_k=50)["results"]
    return sorted(r["memory"].split()[0] for r in found)


CASES = [
    ({"kind": "fruit"}, ["apples", "bananas"]),
    ({"kind": ["fruit", "vegetable"]}, ["apples", "bananas", "carrots"]),
    ({"kind": {"in": ["Fruit"]}}, ["dates"]),
    ({"kind": {"ne": "fruit"}}, ["carrots", "dates", "eggs"]),
    ({"kind": {"nin": ["fruit", "Fruit"]}}, ["carrots", "eggs"]),
    ({"kind": None}, ["eggs"]),
    ({"n": {"gt": 1, "lte": 3}}, ["bananas", "carrots"]),
    ({"n": {"gte": 4}}, ["dates"]),
    ({"n": 2}, ["bananas"]),
    ({"day": {"gte": "2024-02-01", "lt": "2024-04-01"}}, ["bananas", "carrots"]),
    ({"day": {"gt": "2024-04-01"}}, ["dates"]),
    ({"tags": {"contains": "b"}}, ["apples", "bananas"]),
    ({"note": {"contains": "Range"}}, ["eggs"]),
    ({"note": {"icontains": "free"}}, ["eggs"]),
    ({"ok": True}, ["carrots"]),
    ({"OR": [{"n": 1}, {"kind": "vegetable"}]}, ["apples", "carrots"]),
    ({"AND": [{"kind": "fruit"}, {"n": {"gt": 1}}]}, ["bananas"]),
    ({"NOT": {"kind": "fruit"}}, ["carrots", "dates", "eggs"]),
    ({"NOT": [{"kind": "fruit"}, {"n": 4.5}]}, ["carrots", "eggs"]),
    ({"kind": "fruit", "n": {"gte": 2}}, ["bananas"]),
    ({"missing": {"ne": 1}}, ["apples", "bananas", "carrots", "dates", "eggs"]),
]


@pytest.mark.parametrize(("filters", "expected"), CASES)
def test_filters_in_get_all_and_search(food, filters, expected):
    assert listed(food, filters) == expected
    assert searched(food, filters) == expected


@pytest.mark.parametrize(
    "bad",
    [
        {"n": {"between": [1, 2]}},
        {"n": {}},
        {"OR": []},
        {"OR": {"n": 1}},
        {"n": {"gt": "yesterday"}},
        {"n": {"gt": True}},
        {"n": {"in": "abc"}},
        {"bad key!": 1},
        {"n": {"eq": {"nested": 1}}},
        "not a dict",
    ],
)
def test_malformed_filters_raise(food, bad):
    with pytest.raises(InvalidInput):
        food.get_all(user_id="u", filters=bad)
    with pytest.raises(InvalidInput):
        food.search("are", user_id="u", filters=bad)
