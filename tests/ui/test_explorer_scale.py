"""The explorer on a large scope: 10,000 memories naming about 2,000 entities. Every view
renders from one page of data (lists page; the graph draws the top neighbours only), so the
time to first render stays well under a second on a laptop; it is logged here and recorded
in benchmarks/README.md (Explorer)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Page
from corpus import open_store, seed_large_scope
from server_fixtures import ServerProcess

pytestmark = pytest.mark.slow
log = logging.getLogger("linkmem.tests.explorer")
MEMORIES, ENTITIES = 10_000, 2_000
#: A generous bound for a shared CI machine; the measured times are far lower.
MAX_FIRST_RENDER_S = 5.0


@pytest.fixture(scope="module")
def large_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("explorer-large")
    # The fake embedder hashes words into 32 dimensions, so made-up names can collide into
    # near-identical vectors; only exact keys merge here, as distinct names would with a
    # real model.
    settings = {"sqlite.path": str(home / "memory.db"), "retrieval.entity_merge_similarity": 1.0}
    seed_large_scope(settings, "bulk", MEMORIES, ENTITIES)
    server = ServerProcess(settings, home)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def large_page(driver: Any, large_server: ServerProcess, tmp_path: Path) -> Page:
    return Page(driver, large_server.url, tmp_path / "screenshots")


def first_render(page: Page, view: str, record: Any) -> float:
    """Open ``view`` in a fresh page; the milliseconds from navigation to its first render
    (page load, whoami, the view's /v1 calls and drawing), logged and recorded."""
    page.start(view)
    ms = float(page.timings()["firstRender"])
    name = view.split("?")[0].strip("#/")
    log.info("explorer first render %s: %.0f ms", view, ms)
    print(f"explorer first render {view}: {ms:.0f} ms")
    record(f"first_render_ms[{name}]", round(ms))
    assert ms < MAX_FIRST_RENDER_S * 1000, f"{view} took {ms:.0f} ms to render"
    return ms


def test_the_scope_is_as_large_as_claimed(large_server: ServerProcess):
    with open_store(large_server.settings) as memory:
        assert memory.count(user_id="bulk") == MEMORIES
        entities = memory.entities(user_id="bulk", limit=10_000)["results"]
    log.info("large scope: %d memories, %d entities", MEMORIES, len(entities))
    assert len(entities) >= 0.95 * ENTITIES


def test_memories_page_through_ten_thousand(large_page: Page, record_property: Any):
    first_render(large_page, "#/memories?user_id=bulk", record_property)
    assert large_page.wait_for(".pager span").text == "1–25 of 10,000"
    assert len(large_page.all("table.memories tbody tr")) == 25
    large_page.shoot("memories-10k")
    large_page.wait_for(".pager a[rel=next]").click()
    large_page.wait_text(".pager span", "26–50 of 10,000")
    assert large_page.all(".pager a[rel=prev]") and len(large_page.all("tbody tr")) == 25


def test_entities_page_sort_and_filter(large_page: Page, record_property: Any):
    first_render(large_page, "#/entities?user_id=bulk", record_property)
    rows = large_page.all("table.entities tbody tr")
    assert len(rows) == 50
    links = [int(r.find_element("css selector", "td.num").text.replace(",", "")) for r in rows]
    assert links == sorted(links, reverse=True) and links[0] > 100
    large_page.shoot("entities-2k")
    large_page.go("#/entities?user_id=bulk&q=kalo%20ka&order=text")
    names = [r.get_attribute("data-entity") for r in large_page.all("table.entities tbody tr")]
    assert names and names == sorted(names, key=str.lower)
    assert all("kalo ka" in n.lower() for n in names)


def test_the_graph_of_a_hub_shows_its_top_neighbours(
    large_page: Page, large_server: ServerProcess, record_property: Any
):
    with open_store(large_server.settings) as memory:
        hub = memory.entities(user_id="bulk", limit=1)["results"][0]
    ms = first_render(large_page, f"#/entity/{hub['id']}?user_id=bulk", record_property)
    nodes = large_page.all("svg.graph g.node")
    assert len(nodes) == 13  # the hub and its 12 top neighbours, of hundreds
    assert large_page.wait_text("h2.entity-name", hub["entity"])
    large_page.shoot("entity-hub")
    log.info("hub %s (%d links) rendered in %.0f ms", hub["entity"], hub["link_count"], ms)


def test_search_in_the_large_scope(large_page: Page, record_property: Any):
    first_render(large_page, "#/search?user_id=bulk&q=Kaka%20Kakaka%20item%205", record_property)
    assert len(large_page.all("li.result")) == 10
    assert large_page.all("li.result svg.bar rect")
    large_page.shoot("search-10k")
