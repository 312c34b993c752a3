"""``linkmem.rank.neighbour_terms``: each document's neighbours' terms at a weight."""

from __future__ import annotations

from linkmem.rank.neighbour_terms import CONTEXT_SCALE, context_terms, neighbour_weight

DOCS = [["a", "b"], ["c"], ["a", "a", "d"], ["e"]]


def test_window_one_takes_each_neighbour_at_the_weight():
    got = context_terms(DOCS, window=1, weight=0.5)
    half = CONTEXT_SCALE // 2
    assert got == [
        {"c": half},
        {"a": 3 * half, "b": half, "d": half},
        {"c": half, "e": half},
        {"a": 2 * half, "d": half},
    ]


def test_window_two_reaches_two_on_each_side():
    got = context_terms(DOCS, window=2, weight=1.0)
    assert got[0] == {"c": 1000, "a": 2000, "d": 1000}
    assert got[3] == {"c": 1000, "a": 2000, "d": 1000}


def test_nothing_for_a_lone_document_or_no_weight():
    assert context_terms([["a"]], 2, 0.5) == [{}]
    assert context_terms(DOCS, 2, 0.0) == [{}, {}, {}, {}]
    assert context_terms(DOCS, 0, 0.5) == [{}, {}, {}, {}]


def test_rows_of_a_span_equal_the_whole_batchs():
    whole = context_terms(DOCS, 2, 0.5, 1.0)
    assert context_terms(DOCS, 2, 0.5, 1.0, range(1, 3)) == whole[1:3]


def test_a_long_neighbour_counts_in_proportion_to_the_short_ones_length():
    assert neighbour_weight(10, 100, 0.5, 1.0) == 0.05
    assert neighbour_weight(100, 10, 0.5, 1.0) == 0.5
    assert neighbour_weight(10, 100, 0.5, 0.0) == 0.5
    short, long = ["x"] * 2, ["y"] * 200
    got = context_terms([short, long], 1, 0.5, length_ratio=1.0)
    assert got[0] == {"y": round(200 * 0.5 * 2 / 200 * CONTEXT_SCALE)}  # one term's worth
    assert got[1] == {"x": 2 * CONTEXT_SCALE // 2}
