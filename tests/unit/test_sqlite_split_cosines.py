"""A large scope's query cosines computed in two halves at once (``store.sqlite.search_reads.
SPLIT_ROWS``, one half on a side thread) are bit for bit the one product's: the same results,
scores and score parts as searches of the same store with the product in one piece, with and
without a filter or the dense signal."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.sqlite import search_reads

WORDS = ["park", "river", "chess", "violin", "pasta", "kitten", "Paris", "Snow", "Max", "Ana"]


def _searches(memory: Memory, queries: list[str], **options: Any) -> list[list[dict]]:
    return [
        memory.search(q, user_id="u", top_k=k, explain=True, **options)["results"]
        for q in queries
        for k in (1, 10, 60)
    ]


@pytest.mark.parametrize("rows", [64, 128])
@pytest.mark.parametrize(
    "options", [{}, {"filters": {"topic": "chess"}}, {"signals": {"dense": False}}]
)
def test_split_cosines_give_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, options: dict
) -> None:
    rng = random.Random(5)
    texts = [" ".join(rng.choices(WORDS, k=6)) for _ in range(301)]  # cut at row 128
    metadata = [{"topic": "chess" if "chess" in t else "other"} for t in texts]
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(20)]
    extractor = CapitalisedWordsExtractor()
    with Memory(tmp_path / "m.db", embedder=FakeEmbedder(), extractor=extractor) as memory:
        memory.add_batch(texts, user_id="u", metadata=metadata)
        monkeypatch.setattr(search_reads, "SPLIT_ROWS", 10**9)
        whole = _searches(memory, queries, **options)
        monkeypatch.setattr(search_reads, "SPLIT_ROWS", rows)
        assert _searches(memory, queries, **options) == whole
        assert sum(len(hits) for hits in whole) > 100
