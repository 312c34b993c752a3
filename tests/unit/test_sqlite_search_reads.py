"""One search on SQLite through its ``search_reads`` view and ``links_among``: the plain
path's answers, whether the candidates' BM25 comes from one pass over all matching memories
or from their own rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor
from search_reads_cases import SMALL_POOL, all_results, plain_reads, seed, seeded_sqlite

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite import search_reads
from linkmem.store.sqlite.entities import EntityTables


def rounded(runs: list[list[tuple[Any, ...]]]) -> list[list[tuple[Any, ...]]]:
    """SQLite may add one memory's BM25 terms in another order: equal to 1e-9."""
    return [
        [(i, text, round(score, 9), _round_details(details)) for i, text, score, details in run]
        for run in runs
    ]


def _round_details(details: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 9) if isinstance(v, float) else v for k, v in details.items()}


@pytest.mark.parametrize("postings_per_candidate", [0, 10**6])
@pytest.mark.parametrize("retrieval", [{}, SMALL_POOL])
def test_same_results_as_plain_reads(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    retrieval: dict[str, int],
    postings_per_candidate: int,
) -> None:
    monkeypatch.setattr(search_reads, "POSTINGS_PER_CANDIDATE", postings_per_candidate)
    with seeded_sqlite(tmp_path / "m.db", **retrieval) as memory:
        fetched = all_results(memory)
        monkeypatch.delattr(EntityTables, "links_among")  # hubs via the candidates' entities
        with plain_reads():
            plain = all_results(memory)
    assert rounded(fetched) == rounded(plain)
    assert any(len(run) > 3 for run in fetched)


def test_keyword_statistics_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The top-k and the completion of the candidates share one read of the statistics."""
    with Memory(
        tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
    ) as memory:
        seed(memory)
        reads: list[int] = []
        stats = type(memory.store).keyword_stats
        monkeypatch.setattr(
            type(memory.store),
            "keyword_stats",
            lambda store, *a: reads.append(1) or stats(store, *a),
        )
        assert memory.search("Max dog walk park", user_id="alice")["results"]
    assert len(reads) == 1


def test_links_among_equals_the_memories_entities(tmp_path: Path) -> None:
    """The hub links a search reads directly are the ones its candidates' entities hold."""
    with Memory(
        tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
    ) as memory:
        seed(memory)
        store = memory.store
        ids = [r["id"] for r in memory.get_all(user_id="alice", limit=100)["results"]]
        by_memory = store.entities_of_memories(ids)
        entity_ids = sorted({e.id for entities in by_memory.values() for e in entities})
        expected: dict[str, list[str]] = {}
        for memory_id, entities in by_memory.items():
            for entity in entities:
                expected.setdefault(entity.id, []).append(memory_id)
        found = store.links_among(entity_ids, ids)
        assert {k: sorted(v) for k, v in found.items()} == {
            k: sorted(v) for k, v in expected.items()
        }
        assert store.links_among(entity_ids[:2], ids[:5]).keys() <= set(entity_ids[:2])
        assert store.links_among([], ids) == {} == store.links_among(entity_ids, [])
