"""What a search reads once the query's vector is there: on SQLite the second hop's sources'
rare entities (``rare_entities_of_memories``: ``entities_of_memories`` without the entities of
more than ``max_links`` own links) and the hubs' links to the candidates (``links_among``);
each memory's best entity boost (``CandidateBoosts``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import CapitalisedWordsExtractor
from search_reads_cases import SMALL_POOL, all_results, seed, seeded_sqlite

from linkmem import Memory
from linkmem.config import RetrievalConfig
from linkmem.embed.fake import FakeEmbedder
from linkmem.entities.boost import CandidateBoosts
from linkmem.rank.fusion import NO_BOOST, BoostKinds, EntityMatch, entity_boost
from linkmem.store.sqlite.search_reads import SearchReads
from linkmem.types import Scope


@contextmanager
def _seeded(tmp_path: Path) -> Iterator[tuple[Any, list[str]]]:
    """The seeded store and its memories' ids."""
    with Memory(
        tmp_path / "m.db", embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor()
    ) as memory:
        seed(memory)
        yield memory.store, [r["id"] for r in memory.get_all(user_id="alice", limit=200)["results"]]


def test_rare_entities_are_the_memories_entities_up_to_max_links(tmp_path: Path) -> None:
    with _seeded(tmp_path) as (store, ids):
        rare = store.list_entities(Scope(user_id="alice"), "text", 500)
        rare = [e for e in rare if e.link_count == 2]
        assert rare
        # An inherited link: counts in no link_count, yet the memory holds the entity.
        store.link([(ids[0], rare[0].id)], own=False)
        by_memory = store.entities_of_memories(ids)
        counts = {e.link_count for entities in by_memory.values() for e in entities}
        assert max(counts) > 20 and min(counts) <= 2
        for max_links in (0, 1, 2, 3, 20, 10_000):
            expected = {
                memory_id: kept
                for memory_id, entities in by_memory.items()
                if (kept := [e for e in entities if e.link_count <= max_links])
            }
            assert store.rare_entities_of_memories(ids, max_links) == expected
        assert rare[0] in store.rare_entities_of_memories([ids[0]], 2)[ids[0]]
        assert store.rare_entities_of_memories([], 2) == {}


def test_best_boost_ties_go_to_the_first_entity() -> None:
    """Each memory's best boost; among equal boosts the first entity's (topics, then names).
    Max's memories match the question best: its gate is open."""
    config = RetrievalConfig()
    matches = [
        EntityMatch("tea", 0.9, 3, ["m1", "m2"]),
        EntityMatch("coffee", 0.9, 3, ["m2", "m3"]),
        EntityMatch("cake", 0.95, 3, ["m3"]),
        EntityMatch("Max", 1.0, 2, ["m1", "m4"], proper=True),
    ]
    boosts = CandidateBoosts(BoostKinds.of(matches, config), config)
    ids = ["m1", "m2", "m3", "m4", "m5"]
    boosts.array(ids, np.array([0.9, 0.2, 0.3, 0.8, 0.1]))
    tea, _, cake, name = (entity_boost(m, config) for m in matches)
    assert name > cake > tea
    assert {m: b for m in ids if (b := boosts.get(m)) != NO_BOOST} == {
        "m1": (name, "Max"),
        "m2": (tea, "tea"),
        "m3": (cake, "cake"),
        "m4": (name, "Max"),
    }


def test_links_among_takes_any_number_of_ids(tmp_path: Path) -> None:
    """The hubs' links to thousands of candidates (unknown ids among them) in one read."""
    with _seeded(tmp_path) as (store, ids):
        entity_ids = [e.id for e in store.list_entities(Scope(user_id="alice"), "links", 5)]
        found = store.links_among(entity_ids, ids)
        assert found and set(found) <= set(entity_ids)
        unknown = [f"no-such-memory-{i}" for i in range(5000)]
        many = store.links_among([*entity_ids, "no-such-entity", *entity_ids], [*unknown, *ids])
        assert {k: sorted(v) for k, v in many.items()} == {k: sorted(v) for k, v in found.items()}


@pytest.mark.parametrize("retrieval", [{}, SMALL_POOL])
def test_known_candidates_fuse_as_the_asked_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retrieval: dict[str, int]
) -> None:
    """The candidates known before the vector take their cosines from the view's lookup
    (``cosines_of``) and only the newcomers are asked: the same results, scores and parts as
    asking every candidate (a store without the lookup), second-hop targets included."""
    with seeded_sqlite(tmp_path / "m.db", **retrieval) as memory:
        looked_up = all_results(memory)
        monkeypatch.setattr(SearchReads, "cosines_of", lambda self, ids: None)
        assert all_results(memory) == looked_up
        assert any(len(r) > 3 for r in looked_up)
