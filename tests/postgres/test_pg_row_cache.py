"""Searches on PostgreSQL take their pool's memory rows from the process's row cache
(``linkmem.store.postgres.search_record_reads``) only while they are current: an update of a
memory's metadata alone, by another ``Memory`` or by SQL, moves the scope's ``ent_version``
(``m011_search_versions``) and the next search shows it."""

from __future__ import annotations

from typing import Any

import pytest
from search_reads_cases import plain_reads

from linkmem import Memory
from linkmem.store.postgres import search_reads

pytestmark = pytest.mark.postgres

QUERIES = ["Lisbon coffee garden", "How is Max doing?", "Rare3 notes"]


def results(memory: Memory) -> list[list[tuple[str, str, Any, float]]]:
    out = []
    for query in QUERIES:
        found = memory.search(query, user_id="alice", top_k=8)["results"]
        out.append([(h["id"], h["memory"], h["metadata"], h["score"]) for h in found])
    return out


def same_as_server(memory: Memory) -> list[list[tuple[str, str, Any, float]]]:
    """The hits, checked against the plain path's: the same rows, scores within float32
    rounding of the server's cosines."""
    got = results(memory)
    with plain_reads():
        plain = results(memory)
    assert [[h[:3] for h in run] for run in got] == [[h[:3] for h in run] for run in plain]
    scores = [(a[3], b[3]) for x, y in zip(got, plain, strict=True) for a, b in zip(x, y)]
    assert all(abs(a - b) <= 2e-6 for a, b in scores)
    return got


def read_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many memory rows each read of the pool's rows took from the server (the second
    hop's read of the memories it reaches, a subquery, reads them there)."""
    counts: list[int] = []
    read_batch = search_reads.SearchReads._read_batch

    def counted(self: Any, ids: Any, also: Any) -> Any:
        records, keyword, rows = read_batch(self, ids, also)
        if isinstance(ids, list):
            counts.append(len(records))
        return records, keyword, rows

    monkeypatch.setattr(search_reads.SearchReads, "_read_batch", counted)
    return counts


def test_warm_searches_read_no_rows(two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, _ = two
    first = same_as_server(reader)
    counts = read_rows(monkeypatch)
    assert [[h[:3] for h in run] for run in results(reader)] == [
        [h[:3] for h in run] for run in first
    ]
    assert sum(counts) == 0
    assert reader.store.row_cache.nbytes > 0  # type: ignore[attr-defined]


def test_metadata_and_text_updates_are_seen(two: Any) -> None:
    reader, writer = two
    first = same_as_server(reader)
    target = first[0][0][0]
    writer.update(target, metadata={"note": "changed"})
    after = same_as_server(reader)
    assert after[0][0][:2] == first[0][0][:2] and after[0][0][2]["note"] == "changed"

    store: Any = writer.store
    store.db.run(
        f"UPDATE {store.t.mem} SET metadata = '{{\"by\": \"sql\"}}'::jsonb WHERE id = '{target}'"
    )
    assert same_as_server(reader)[0][0][2] == {"by": "sql"}

    writer.delete(target)
    assert all(target not in [h[0] for h in run] for run in same_as_server(reader))
