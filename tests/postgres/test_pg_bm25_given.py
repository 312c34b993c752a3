"""The pool's BM25 from the first read's statistics (``sql.bm25_given``): the same rows, to
the last digit, as the plain statement over the same ids, which reads every posting of the
query's terms again."""

from __future__ import annotations

import pytest
from test_pg_specific import CORPUS, QUERIES, corpus_store, make_store, pg_dsn

from linkmem.filters import parse_filters
from linkmem.rank.terms import query_terms
from linkmem.store.postgres.memories import bm25_given_statement, bm25_statement
from linkmem.types import Scope

pytestmark = pytest.mark.postgres
__all__ = ["corpus_store", "make_store", "pg_dsn"]  # fixtures of test_pg_specific


@pytest.mark.parametrize("read", [Scope("u1"), Scope(agent_id="helper"), Scope()])
@pytest.mark.parametrize("filters", [None, {"i": {"gte": 2}}])
def test_given_statistics_give_the_plain_scores(corpus_store, read, filters):
    store, rows = corpus_store
    node = parse_filters(filters) if filters else None
    scope_ids = store._scope_ids(read)
    k1_b = (store.k1, store.b)
    ids = [m.record.id for m in rows]
    for text in QUERIES:
        terms = list(dict.fromkeys(query_terms(text)))
        first = bm25_statement(store.t, scope_ids, terms, node, None, 2, k1_b, stats=True)
        *top, stats = store.db.rows(*first)
        assert [r[:2] for r in top] == store.db.rows(
            *bm25_statement(store.t, scope_ids, terms, node, None, 2, k1_b)
        )
        for some in (ids, ids[::2], ids[1:4]):
            plain = bm25_statement(store.t, scope_ids, terms, node, some, len(some), k1_b)
            given = bm25_given_statement(store.t, scope_ids, stats[2:], node, some, k1_b)
            assert store.db.rows(*given) == store.db.rows(*plain), (text, read)


def test_no_term_found_gives_no_statistics(corpus_store):
    store, _ = corpus_store
    statement = bm25_statement(store.t, None, ["zzz"], None, None, 5, (store.k1, store.b), True)
    [row] = store.db.rows(*statement)
    assert row[:4] == (None, None, None, None) and row[4] == len(CORPUS)
