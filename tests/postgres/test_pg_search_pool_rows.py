"""A PostgreSQL search's reads answered from the pool's rows (``SearchReads``): the known
candidates' cosines (``cosines_of``), the ranked cosines of some ids (``vector_search``), the
time signal's dates (``memory_dates``) and the specific entities' memories
(``memories_of_entities``) are the plain store's, in its order, for every search of the
shared cases."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from helpers import CapitalisedWordsExtractor
from search_reads_cases import CASES, QUERIES, SMALL_POOL, results, seed

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.store.postgres import search_reads

pytestmark = pytest.mark.postgres

SearchReads = search_reads.SearchReads


@pytest.mark.parametrize("cached", [True, False], ids=["cached", "server"])
@pytest.mark.parametrize("retrieval", [{}, SMALL_POOL])
def test_pool_rows_answer_as_the_plain_store(
    pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch, retrieval: dict[str, int], cached: bool
) -> None:
    """Cosines from cached vectors (``dense_cache``) are float32 products: the plain ones to
    float32 rounding, in the same order; from the server, exactly."""
    memory = seed(
        Memory(
            store="postgres",
            postgres={"dsn": pg_dsn_18},
            collection="t_" + uuid.uuid4().hex[:12],
            embedder=FakeEmbedder(),
            extractor=CapitalisedWordsExtractor(),
            retrieval={"entity_pool_max_links": 6, "hop_max_links": 40, **retrieval},
        )
    )
    if not cached:
        memory.store.dense_cache.max_bytes = 0  # type: ignore[attr-defined]

    def same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> bool:
        if not cached:
            return got == want
        return [i for i, _ in got] == [i for i, _ in want] and np.allclose(
            [c for _, c in got], [c for _, c in want], rtol=0, atol=1e-6
        )

    checked = {"cosines": 0, "absent": 0, "lists": 0}
    cosines_of, memories_of = SearchReads.cosines_of, SearchReads.memories_of_entities

    def checked_cosines(self: SearchReads, ids: Any) -> Any:
        plan = self._plan
        cosines = cosines_of(self, ids)
        checked["absent"] += int(not cosines(plan.vector)[1].all())  # out of scope or filters
        ids = [*ids, "no-such-memory"]  # an id without a row has no cosine
        sims, found = cosines_of(self, ids)(plan.vector)
        plain = self._store.vector_search(plan.vector, plan.scope, len(ids), plan.filters, ids)
        by_id = dict(plain)
        assert [i for i, f in zip(ids, found.tolist()) if f] == [i for i in ids if i in by_id]
        assert sims.dtype == np.float64
        wanted = [(i, by_id[i]) for i in ids if i in by_id]
        assert same(list(zip([i for i, _ in wanted], sims.tolist())), wanted)
        ranked = self.vector_search(plan.vector, plan.scope, len(ids), plan.filters, ids)
        assert same(ranked, plain)
        assert same(self.vector_search(plan.vector, plan.scope, 3, plan.filters, ids), plain[:3])
        # the time signal's read of the first results: the plain records' id, text and date
        plain_records = self._store.get_memories(ids)
        assert self.memory_dates(ids) == [(r.id, r.text, r.created_at) for r in plain_records]
        checked["cosines"] += 1
        return cosines

    def checked_memories(self: SearchReads, entity_ids: Any, own_only: bool = False) -> Any:
        out = memories_of(self, entity_ids, own_only)
        for own in (False, True):
            # each list in memory seq order (the dicts' order is the plain rows' for entities
            # whose first memories differ; where two share it, the plan's)
            assert memories_of(self, entity_ids, own) == self._store.memories_of_entities(
                entity_ids, own
            )
        checked["lists"] += len(out)
        return out

    try:
        monkeypatch.setattr(SearchReads, "cosines_of", checked_cosines)
        monkeypatch.setattr(SearchReads, "memories_of_entities", checked_memories)
        for query in QUERIES:
            for case in CASES:
                results(memory, query, **case)
        assert checked["cosines"] > 0 and checked["absent"] > 0 and checked["lists"] > 0
    finally:
        memory.close()
