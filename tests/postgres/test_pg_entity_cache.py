"""Searches on PostgreSQL take the hubs' links and the second hop's check from the process's
entity cache (``linkmem.store.postgres.search_entity_cache``) only while they are current: a
write of the scope's memories, entities or links, by another ``Memory`` or by SQL, moves the
scope's versions and the next search reads them again. Answers are the plain path's."""

from __future__ import annotations

from typing import Any

import pytest
from pg_cache_helpers import (
    ENTITY_POOL,
    assert_same_scores,
    scores_as_servers,
    scores_of,
)
from search_reads_cases import QUERIES

from linkmem.store.postgres import search_reads
from linkmem.types import Scope

pytestmark = pytest.mark.postgres


RETRIEVAL = ENTITY_POOL  # the ``two`` fixture's (conftest)


def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Each search's view (``SearchReads``), and the server reads of hub links and of the
    second hop's rare entities."""
    seen: dict[str, list[Any]] = {"reads": [], "hub_links": [], "rare": []}
    fetch_first = search_reads.SearchReads.fetch_first
    fetch_rare = search_reads.SearchReads._fetch_rare
    hub_links = search_reads.q.hub_links

    def first(self: Any) -> None:
        fetch_first(self)
        seen["reads"].append(self)

    def rare(self: Any, ids: list[str]) -> None:
        seen["rare"].append(ids)
        fetch_rare(self, ids)

    def links(*args: Any) -> Any:
        seen["hub_links"].append(args)
        return hub_links(*args)

    monkeypatch.setattr(search_reads.SearchReads, "fetch_first", first)
    monkeypatch.setattr(search_reads.SearchReads, "_fetch_rare", rare)
    monkeypatch.setattr(search_reads.q, "hub_links", links)
    return seen


def test_warm_searches_read_no_hub_links_and_skip_hops(
    two: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, _ = two
    first = scores_as_servers(reader)
    scores_as_servers(reader)  # the lists and the hop index are read from the second search
    seen = recorded(monkeypatch)
    assert_same_scores(scores_of(reader), first)
    assert seen["hub_links"] == []
    assert any(r._hub_lists for r in seen["reads"])  # hubs' links came from the lists
    assert len(seen["rare"]) < len(QUERIES)  # some hops known to reach nothing
    cache = reader.store.entity_cache  # type: ignore[attr-defined]
    assert cache.nbytes > 0


def test_cached_links_among_are_the_stores(two: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, _ = two
    scores_as_servers(reader)
    scores_as_servers(reader)
    seen = recorded(monkeypatch)
    scores_of(reader)
    store: Any = reader.store
    everyone = store.memory_ids(Scope(user_id="alice"))
    checked = 0
    for reads in seen["reads"]:
        if not reads._hub_lists:
            continue
        hubs = sorted(reads._hub_lists)
        for memories in (everyone, everyone[:7], everyone[40:41], []):
            cached = reads._cached_links_among(hubs, memories)
            plain: dict[str, list[str]] = {}  # the store's links, as boost.py reads them
            for memory_id, entities in store.entities_of_memories(memories).items():
                for entity in entities:
                    if entity.id in hubs:
                        plain.setdefault(entity.id, []).append(memory_id)
            assert cached == {e: sorted(m) for e, m in plain.items()}
            checked += 1
    assert checked


def test_writes_are_seen_by_the_next_search(two: Any) -> None:
    reader, writer = two
    scores_as_servers(reader)
    scores_as_servers(reader)
    # A new memory naming the names the queries ask for: new links to hubs and rare ones.
    added = writer.add("Max met Ana Lopez in Rome for Project Falcon", user_id="alice")
    assert added["results"]
    scores_as_servers(reader)
    store: Any = writer.store
    t = store.t
    store.db.run(f"DELETE FROM {t.links} WHERE memory = '{added['results'][0]['id']}'")
    scores_as_servers(reader)
    writer.delete(added["results"][0]["id"])
    scores_as_servers(reader)
