"""Searches on PostgreSQL score BM25 from postings cached in the process
(``linkmem.store.postgres.search_keyword_reads``) only while they are current: every write of a
scope's postings, by this process or another (or by SQL alone), moves the scope's
``kw_version`` on in its own transaction (``m012_keyword_versions``), and every write of its
memories its ``mem_version``; entities and links move neither. A process's own adds are
appended to its cache. The scores are the server's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pg_cache_helpers import add_from_another_process
from search_reads_cases import plain_reads

from linkmem import Memory
from linkmem.store.caches.keyword_postings import KeywordScores
from linkmem.store.postgres import search_reads
from linkmem.store.vectors import ScopeMatrix

pytestmark = pytest.mark.postgres

QUERIES = ["Lisbon coffee garden", "How is Max doing?", "Rome deploy script", "Rare3 notes"]


def hits(memory: Memory, query: str) -> list[tuple[str, float, float]]:
    found = memory.search(query, user_id="alice", top_k=8, explain=True)["results"]
    return [(h["id"], h["score"], h["score_details"]["bm25_raw"]) for h in found]


def tables(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The keyword table each search built (None: the server's or the store's BM25)."""
    seen: list[Any] = []
    fetch_first = search_reads.SearchReads.fetch_first

    def recorded(self: search_reads.SearchReads) -> None:
        fetch_first(self)
        seen.append(self._keyword_table)

    monkeypatch.setattr(search_reads.SearchReads, "fetch_first", recorded)
    return seen


def same_as_server(memory: Memory) -> list[list[tuple[str, float, float]]]:
    """Every query's hits, checked against the plain path's (the server's BM25)."""
    got = [hits(memory, q) for q in QUERIES]
    with plain_reads():
        plain = [hits(memory, q) for q in QUERIES]
    for mine, theirs in zip(got, plain, strict=True):
        assert [h[0] for h in mine] == [h[0] for h in theirs]
        assert np.allclose([h[1:] for h in mine], [h[1:] for h in theirs], atol=2e-6)
    assert any(h[2] > 0 for run in got for h in run)
    return got


def versions(memory: Memory) -> tuple[int, int]:
    store: Any = memory.store
    row = store.db.rows(
        f"SELECT ent_version, mem_version FROM {store.t.scopes} WHERE user_id = 'alice'"
    )
    return int(row[0][0]), int(row[0][1])


def keyword_versions(memory: Memory) -> tuple[int, int]:
    store: Any = memory.store
    row = store.db.rows(
        f"SELECT kw_version, mem_version FROM {store.t.scopes} WHERE user_id = 'alice'"
    )
    return int(row[0][0]), int(row[0][1])


def postings_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each search read postings from the server (False: all its terms held)."""
    reads: list[bool] = []
    queue = search_reads.SearchReads._queue_postings

    def counted(self: Any, conn: Any) -> Any:
        cursor = queue(self, conn)
        reads.append(cursor is not None)
        return cursor

    monkeypatch.setattr(search_reads.SearchReads, "_queue_postings", counted)
    return reads


def test_scores_come_from_the_cache_and_are_the_servers(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _ = two
    seen = tables(monkeypatch)
    same_as_server(reader)
    assert len(seen) == len(QUERIES) and all(t is not None for t in seen)
    store: Any = reader.store
    reads = postings_reads(monkeypatch)
    same_as_server(reader)
    assert reads == [False] * len(QUERIES)  # every term held: no postings read
    assert store.keyword_cache.nbytes > 0


def test_writes_of_every_kind_move_the_version_and_are_seen(two: Any) -> None:
    reader, writer = two
    same_as_server(reader)
    ent, mem = versions(reader)

    added = writer.add("Lisbon garden coffee again", user_id="alice", infer=False)
    added_id = added["results"][0]["id"]
    assert versions(reader) > (ent, mem)
    assert any(added_id in [h[0] for h in run] for run in same_as_server(reader))

    ent, mem = versions(reader)
    writer.update(added_id, metadata={"note": "changed"})  # metadata alone: no mem_version
    assert versions(reader)[1] == mem and versions(reader)[0] > ent

    store: Any = writer.store
    t = store.t
    ent, mem = versions(reader)
    kw = keyword_versions(reader)[0]
    # A write of postings alone (as repair or a re-index may do), by SQL: the next search
    # scores from the new counts.
    store.db.run(f"UPDATE {t.postings} SET tf = tf + 3 WHERE term = 'lisbon'")
    assert versions(reader) == (ent + 1, mem) and keyword_versions(reader) == (kw + 1, mem)
    same_as_server(reader)

    writer.delete(added_id)
    assert all(added_id not in [h[0] for h in run] for run in same_as_server(reader))


def test_entities_and_links_move_the_version(two: Any) -> None:
    reader, _ = two
    store: Any = reader.store
    t = store.t
    ent, mem = versions(reader)
    kw = keyword_versions(reader)
    entity = store.db.rows(f"SELECT id FROM {t.entities} LIMIT 1")[0][0]
    store.db.run(f"UPDATE {t.entities} SET text = text || ' x' WHERE id = '{entity}'")
    assert versions(reader) == (ent + 1, mem)
    store.db.run(f"DELETE FROM {t.links} WHERE entity = '{entity}'")
    assert versions(reader) == (ent + 2, mem)
    assert keyword_versions(reader) == kw  # the postings are as they were


def test_own_adds_are_appended_and_the_next_search_reads_no_postings(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, writer = two
    same_as_server(writer)  # every query's terms held
    kw, mem = keyword_versions(writer)
    added = writer.add("Lisbon garden coffee with Max in Rome", user_id="alice")
    assert keyword_versions(writer) == (kw + 1, mem + 1)  # entities and links besides
    added_id = added["results"][0]["id"]
    reads = postings_reads(monkeypatch)
    runs = same_as_server(writer)
    assert reads[: len(QUERIES)] == [False] * len(QUERIES)
    assert any(added_id in [h[0] for h in run] for run in runs)
    batch = writer.add_batch(["Rome deploy script notes", "coffee in Lisbon"], user_id="alice")
    assert keyword_versions(writer) == (kw + 2, mem + 2)
    reads.clear()
    runs = same_as_server(writer)
    assert reads[: len(QUERIES)] == [False] * len(QUERIES)
    assert batch["results"][0]["id"] in [h[0] for h in runs[2]]


def test_an_add_beside_another_postings_write_is_not_appended(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction adds a memory and changes other postings: the versions after it are
    past what appending the add gives, so the next search reads the postings again."""
    _, writer = two
    same_as_server(writer)
    store: Any = writer.store
    with store.transaction():
        writer.add("Lisbon coffee notes", user_id="alice")
        store.db.run(f"UPDATE {store.t.postings} SET tf = tf + 7 WHERE term = 'rome'")
    reads = postings_reads(monkeypatch)
    same_as_server(writer)
    assert any(reads[: len(QUERIES)])


def test_a_write_from_another_process_is_seen_at_once(two: Any, pg_dsn_18: str) -> None:
    reader, _ = two
    same_as_server(reader)
    collection = reader.settings.collection
    added = add_from_another_process(pg_dsn_18, collection, "Rome deploy script Rome")
    assert added in [h[0] for h in same_as_server(reader)[2]]


def test_a_search_inside_a_transaction_reads_the_server(two: Any) -> None:
    """Inside an open transaction the search sees its own uncommitted postings."""
    reader, _ = two
    same_as_server(reader)
    store: Any = reader.store
    t = store.t
    with pytest.raises(RuntimeError), store.transaction():
        store.db.run(f"UPDATE {t.postings} SET tf = tf + 50 WHERE term = 'rome'")
        inside = hits(reader, "Rome deploy script")
        raise RuntimeError("roll back")
    after = same_as_server(reader)[2]
    assert inside != after


def test_ties_at_the_cut_go_by_memory_id() -> None:
    """PostgreSQL's ``ORDER BY score DESC, h.memory``: equal scores by id, not by row."""
    ids = ["d", "b", "c", "a"]
    matrix = ScopeMatrix(1, np.arange(4, dtype=np.int64), ids, np.zeros((4, 2), np.float32))
    scores = [np.array([1.0, 2.0, 1.0, 1.0])]
    assert KeywordScores([matrix], scores, ties_by_id=True).top(2) == [("b", 2.0), ("a", 1.0)]
    assert KeywordScores([matrix], scores).top(2) == [("b", 2.0), ("d", 1.0)]
    assert KeywordScores([matrix], scores, ties_by_id=True).top(0) == []
