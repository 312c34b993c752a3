"""Contract: each memory's keyword document carries the words of the memories written beside it
in the same call (``linkmem.rank.neighbour_terms``), kept apart from its own terms, so that
check, repair, export and import keep them, and BM25 scores them by ``linkmem.rank.bm25``."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path

import pytest
from helpers import exported_rows, older_export

from linkmem import staged_write
from linkmem.rank import bm25
from linkmem.rank.neighbour_terms import CONTEXT_SCALE, context_terms
from linkmem.rank.terms import query_terms, terms_batch
from linkmem.types import Scope

pytestmark = pytest.mark.embedded

TEXTS = [
    "I adopted a puppy last week",
    "What did you name it?",
    "We called him Biscuit, after the cookies",
    "That is adorable. How old is he?",
    "Ten weeks, and he already chews every shoe in the flat",
    "Maybe try a bitter spray on the shoes",
    "Good idea, I will buy one in Lisbon tomorrow",
]
QUERY = "what is the name of the puppy and his shoes"


def ids_of(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


def tables(memory) -> tuple[str, str]:
    store = memory.store
    if hasattr(store, "c"):
        return store.c, f"{store.c}_postings"
    return store.t.mem, store.t.postings


def key_of(memory, memory_id: str) -> object:
    """What the postings table holds in ``memory`` for this memory (SQLite: its rowid)."""
    store = memory.store
    if hasattr(store, "c"):
        return store.db.rows(f"SELECT rowid FROM {store.c} WHERE id = ?", (memory_id,))[0][0]
    return memory_id


def run(memory, sql: str, *args: object) -> None:
    marker = "?" if hasattr(memory.store, "c") else "%s"
    memory.store.db.run(sql.replace("%s", marker), args)


def expected_scores(texts: list[str], query: str, weight: float, window: int) -> dict[int, float]:
    """BM25 of the expanded documents, by ``rank.bm25`` (the rounding of the stored units)."""
    docs = terms_batch(texts)
    contexts = context_terms(docs, window, weight)
    expanded = [
        {t: own.get(t, 0) + ctx.get(t, 0) / CONTEXT_SCALE for t in {*own, *ctx}}
        for own, ctx in ((Counter(d), c) for d, c in zip(docs, contexts))
    ]
    lengths = [len(d) + sum(c.values()) / CONTEXT_SCALE for d, c in zip(docs, contexts)]
    words = query_terms(query)
    df = {t: sum(1 for e in expanded if t in e) for t in words}
    idfs = {t: bm25.idf(len(texts), df[t]) for t in words}
    avg = sum(lengths) / len(lengths)
    scores = {
        i: bm25.score_document(e, n, words, idfs, avg)
        for i, (e, n) in enumerate(zip(expanded, lengths))
    }
    return {i: s for i, s in scores.items() if s > 0}


def test_a_batch_carries_its_neighbours_words_and_a_single_add_none(make_memory):
    memory = make_memory()
    config = memory.retrieval
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    stored = memory.store.postings_of(ids)
    want = context_terms(
        terms_batch(TEXTS),
        config.keyword_context_window,
        config.keyword_context_weight,
        config.keyword_context_length_ratio,
    )
    assert [stored[i].context for i in ids] == want
    assert all(want) and "puppi" in stored[ids[1]].context and "puppi" not in stored[ids[1]].tf
    assert [stored[i].ctx_len for i in ids] == [sum(w.values()) for w in want]
    alone = ids_of(memory.add(TEXTS[0], user_id="u"))[0]
    assert memory.store.postings_of([alone])[alone].context == {}
    assert memory.check()["ok"]


def test_keyword_scores_are_bm25_of_the_expanded_documents(make_memory):
    memory = make_memory(retrieval={"keyword_context_length_ratio": 0.0})
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    config = memory.retrieval
    found = dict(memory.store.keyword_search(query_terms(QUERY), Scope("u"), 100))
    want = expected_scores(
        TEXTS, QUERY, config.keyword_context_weight, config.keyword_context_window
    )
    assert found.keys() == {ids[i] for i in want}
    for i, score in want.items():
        assert found[ids[i]] == pytest.approx(score, rel=1e-9)


def test_no_context_weight_indexes_own_words_only(make_memory):
    memory = make_memory(retrieval={"keyword_context_weight": 0.0})
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    assert all(not p.context for p in memory.store.postings_of(ids).values())
    found = dict(memory.store.keyword_search(query_terms(QUERY), Scope("u"), 100))
    want = expected_scores(TEXTS, QUERY, 0.0, 0)
    assert {ids[i]: pytest.approx(s, rel=1e-9) for i, s in want.items()} == found


def test_a_staged_batch_has_the_contexts_of_one_chunk(make_memory, monkeypatch):
    memory = make_memory()
    whole = ids_of(memory.add_batch(TEXTS, user_id="whole"))
    monkeypatch.setattr(staged_write, "WRITE_CHUNK", 2)
    staged = ids_of(memory.add_batch(TEXTS, user_id="staged"))
    a, b = memory.store.postings_of(whole), memory.store.postings_of(staged)
    assert [a[i].context for i in whole] == [b[i].context for i in staged]
    assert memory.check()["ok"]


def test_update_keeps_the_context_and_delete_leaves_the_neighbours_whole(make_memory):
    memory = make_memory()
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    before = memory.store.postings_of(ids)
    memory.update(ids[2], "We called him Pepper instead")
    after = memory.store.postings_of([ids[2]])[ids[2]]
    assert after.context == before[ids[2]].context and "pepper" in after.tf
    memory.delete(ids[3])
    assert memory.store.postings_of([ids[4]])[ids[4]].context == before[ids[4]].context
    assert memory.check()["ok"]
    assert ids[2] in ids_of(memory.search("Pepper", user_id="u"))


def test_check_finds_and_repairs_broken_context_bookkeeping(make_memory):
    memory = make_memory()
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    words = query_terms(QUERY)
    before = memory.store.keyword_search(words, Scope("u"), 100)
    mem, postings = tables(memory)
    run(memory, f"UPDATE {mem} SET ctx_len = ctx_len + 7 WHERE id = %s", ids[1])
    scope_id = memory.store.db.rows(f"SELECT scope_id FROM {mem} WHERE id = '{ids[0]}'")[0][0]
    sqlite = hasattr(memory.store, "c")
    extra = ", doc_len, ctx_len" if sqlite else ""
    values = ", 0, 0" if sqlite else ""
    run(
        memory,
        f"INSERT INTO {postings} (scope_id, term, memory, tf, ctx{extra}) "
        f"VALUES (%s, %s, %s, 0, 0{values})",
        scope_id,
        "zzz",
        key_of(memory, ids[0]),
    )
    found = {p["kind"] for p in memory.check()["problems"]}
    assert {"wrong_postings", "stale_stats", "stray_postings"} <= found
    assert memory.check(repair=True)["ok"]
    after = dict(memory.store.keyword_search(words, Scope("u"), 100))
    assert after == pytest.approx(dict(before))


def test_export_and_import_keep_the_context(make_memory, tmp_path: Path):
    source = make_memory()
    ids = ids_of(source.add_batch(TEXTS, user_id="u"))
    lines = exported_rows(source, tmp_path / "out.jsonl")
    memories = [row for row in lines if row["type"] == "memory"]
    assert all(row["context"] for row in memories) and lines[0]["version"] >= 2
    target = make_memory(collection="r_" + uuid.uuid4().hex[:12])
    target.restore(tmp_path / "out.jsonl")
    a, b = source.store.postings_of(ids), target.store.postings_of(ids)
    assert [a[i].context for i in ids] == [b[i].context for i in ids]
    words = query_terms(QUERY)
    scope = Scope("u")
    assert target.store.keyword_search(words, scope, 9) == source.store.keyword_search(
        words, scope, 9
    )


def test_an_export_without_context_imports_as_before(make_memory, tmp_path: Path):
    source = make_memory()
    ids = ids_of(source.add_batch(TEXTS, user_id="u"))
    older = older_export(source, tmp_path, 1, "context")
    target = make_memory(collection="r_" + uuid.uuid4().hex[:12])
    target.restore(older)
    assert all(not p.context for p in target.store.postings_of(ids).values())
    assert target.check()["ok"]


@pytest.mark.parametrize("weight", [-1, "x", float("inf")])
def test_a_damaged_context_is_refused(make_memory, tmp_path: Path, weight):
    source = make_memory()
    source.add_batch(TEXTS[:3], user_id="u")
    rows = exported_rows(source, tmp_path / "out.jsonl")
    rows[1]["context"] = {"puppi": weight}
    text = "".join(json.dumps(r) + "\n" for r in rows).replace("Infinity", "1e999")
    (tmp_path / "bad.jsonl").write_text(text)
    target = make_memory(collection="r_" + uuid.uuid4().hex[:12])
    with pytest.raises(Exception, match="context"):
        target.restore(tmp_path / "bad.jsonl")
    assert target.count(user_id="u") == 0


def downgrade(memory) -> None:
    """Take the store back to its schema before context terms (as an older linkmem left it)."""
    store = memory.store
    if hasattr(store, "c"):
        c, names = store.c, ("m003_context_terms", "m004_term_counts")
        statements = [
            f"DROP TRIGGER {c}_terms_add",
            f"DROP TRIGGER {c}_terms_sub",
            f"DROP TABLE {c}_terms",
            f"ALTER TABLE {c}_postings DROP COLUMN ctx",
            f"ALTER TABLE {c}_postings DROP COLUMN ctx_len",
            f"ALTER TABLE {c} DROP COLUMN ctx_len",
            f"ALTER TABLE {c}_scopes DROP COLUMN ctx_total",
        ]
    else:
        t, names = store.t, ("m005_context_terms",)
        c, key, doc_len = t.c, t.index("_postings_pkey"), t.index("_doc_len")
        statements = [
            f"ALTER TABLE {t.postings} DROP CONSTRAINT {key}",
            f"ALTER TABLE {t.postings} DROP COLUMN ctx",
            f"ALTER TABLE {t.postings} ADD CONSTRAINT {key} PRIMARY KEY (scope_id, term, memory) "
            "INCLUDE (tf)",
            f"DROP INDEX {doc_len}",
            f"ALTER TABLE {t.mem} DROP COLUMN ctx_len",
            f"CREATE INDEX {doc_len} ON {t.mem} (id) INCLUDE (doc_len)",
            f"ALTER TABLE {t.scopes} DROP COLUMN ctx_total",
        ]
    for statement in statements:
        store.db.run(statement)
    for name in names:
        store.db.run(f"DELETE FROM linkmem_migrations WHERE name = '{name}' AND collection = '{c}'")


def test_a_store_from_before_context_terms_opens_and_searches_as_before(make_memory):
    old = make_memory(retrieval={"keyword_context_weight": 0.0})
    ids = ids_of(old.add_batch(TEXTS, user_id="u"))
    before = old.store.keyword_search(query_terms(QUERY), Scope("u"), 100)
    downgrade(old)
    old.close()
    new = make_memory()
    assert new.store.keyword_search(query_terms(QUERY), Scope("u"), 100) == before
    assert all(not p.context for p in new.store.postings_of(ids).values())
    assert new.check()["ok"]
    added = ids_of(new.add_batch(TEXTS, user_id="u"))
    assert all(p.context for p in new.store.postings_of(added).values())
    assert new.check()["ok"]


def test_sqlite_keeps_each_terms_document_frequency(make_memory):
    memory = make_memory()
    store = memory.store
    if not hasattr(store, "c"):
        pytest.skip("the term counts table is SQLite's")
    ids = ids_of(memory.add_batch(TEXTS, user_id="u"))
    memory.update(ids[1], "What did you call the puppy?")
    memory.delete(ids[4])
    counted = store.db.rows(
        f"SELECT scope_id, term, count(*) FROM {store.c}_postings GROUP BY scope_id, term"
    )
    kept = store.db.rows(f"SELECT scope_id, term, df FROM {store.c}_terms WHERE df > 0")
    assert sorted(counted) == sorted(kept)
    words = query_terms(QUERY)
    before = store.keyword_search(words, Scope("u"), 100)
    store.db.run(f"UPDATE {store.c}_terms SET df = df + 3 WHERE term = 'puppi'")
    assert [p["kind"] for p in memory.check()["problems"]] == ["stale_stats"]
    assert memory.check(repair=True)["ok"]
    assert store.keyword_search(words, Scope("u"), 100) == before
    memory.reset()
    assert store.db.rows(f"SELECT count(*) FROM {store.c}_terms")[0][0] == 0


ANSWER = (
    "Here is a plan for the week. Start each morning with twenty minutes of easy running, "
    "then stretch for ten. On Tuesday and Thursday add strides, six of them, with a slow walk "
    "back between each. Keep Saturday for the long run and Sunday for rest. "
) * 3
EXCHANGE = [
    "Quick note: my sister Ines lives in Porto. Can you plan my running week?",
    ANSWER,
    "Thanks. What should I eat before the long run?",
    "Something light two hours before: toast with honey or a banana, and water. " * 6,
]


def test_short_requests_and_long_answers_are_written_without_neighbour_context(make_memory):
    """A batch whose neighbouring texts differ in length far more than a conversation's
    (``RetrievalConfig.context_length_ratio_max``) gets neither neighbour words nor blended
    vectors: it is stored as with both turned off."""
    memory = make_memory()
    ids = ids_of(memory.add_batch(EXCHANGE, user_id="u"))
    assert all(not p.context for p in memory.store.postings_of(ids).values())
    off = {"context_weight": 0.0, "keyword_context_weight": 0.0}
    plain = make_memory(collection="p_" + uuid.uuid4().hex[:12], retrieval=off)
    plain.add_batch(EXCHANGE, user_id="u")
    query = "Where does my sister live?"

    def dense_by_text(m) -> dict[str, float]:
        found = m.search(query, user_id="u", top_k=10, explain=True)["results"]
        return {r["memory"]: r["score_details"]["dense"] for r in found}

    assert dense_by_text(memory) == pytest.approx(dense_by_text(plain), abs=1e-6)
    conversation = make_memory(collection="c_" + uuid.uuid4().hex[:12])
    kept = ids_of(conversation.add_batch(TEXTS, user_id="u"))
    assert all(p.context for p in conversation.store.postings_of(kept).values())
