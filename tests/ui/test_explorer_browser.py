"""The explorer in real headless Chromium against a real server: sign in with a key, search
and read the score bars, open an entity and its graph, merge two entities and see the list
change. Every view is saved as a screenshot under the test's folder and checked not blank."""

from __future__ import annotations

from typing import Any

import pytest
from browser import Page
from corpus import CONVERSATION

QUERY = "What did Max do on the beach?"
EXPECTED_FIRST = "Max loves running on the beach in Lisbon"


def texts(page: Page, css: str) -> list[str]:
    return [e.text for e in page.all(css)]


def test_search_shows_the_best_memory_first_with_its_score_bars(page: Page, keyed_server: Any):
    page.start("#/search", key=keyed_server.secrets["alice"])
    assert page.wait_for("#who").text == "write key · user:alice"
    user = page.wait_for("#scope input[name=user_id]")
    assert user.get_attribute("value") == "alice" and not user.is_enabled()  # pinned by the key
    page.wait_for("input[name=q]").send_keys(QUERY + "\n")
    first = page.wait_for("li.result")
    assert first.find_element("css selector", "a.text").text == EXPECTED_FIRST
    parts = {
        r.get_attribute("class"): float(r.get_attribute("width"))
        for r in first.find_elements("css selector", "svg.bar rect")
    }
    assert {"part-dense", "part-bm25", "part-entity"} <= set(parts), parts
    assert all(width > 0 for width in parts.values())
    assert "boost from Max" in first.text  # the entity that caused the boost
    assert len(page.all("li.result")) == len(CONVERSATION)
    page.shoot("search")
    assert page.errors() == []


def test_memories_list_and_a_memory_with_its_entities_and_history(page: Page, keyed_server: Any):
    page.start("#/memories", key=keyed_server.secrets["alice"])
    assert page.wait_for(".pager span").text == f"1–{len(CONVERSATION)} of {len(CONVERSATION)}"
    assert sorted(texts(page, "table.memories tbody td a")) == sorted(CONVERSATION)
    page.shoot("memories")
    page.all("table.memories tbody tr")[-1].find_element("css selector", "a").click()  # oldest
    page.wait_text(".memory-text", CONVERSATION[0])
    facts = dict(zip(texts(page, "dl.facts dt"), texts(page, "dl.facts dd")))
    assert facts["user_id"] == "alice" and facts["role"] == "user"
    assert texts(page, ".chips a.chip") == ["Max PROPER · 3"]
    assert texts(page, "table.history tbody td")[1:3] == ["ADD", ""]
    page.shoot("memory")


def test_entity_page_draws_the_neighbourhood_graph(page: Page, keyed_server: Any):
    page.start("#/entities", key=keyed_server.secrets["alice"])
    rows = {r.get_attribute("data-entity"): r for r in page.all("table.entities tbody tr")}
    assert {"Max", "Lisbon", "Ana", "Carlos", "Porto", "Lisboa"} <= set(rows)
    assert rows["Lisbon"].find_element("css selector", "td.num").text == "3"
    page.shoot("entities")
    rows["Lisbon"].find_element("css selector", "a").click()
    page.wait_text("h2.entity-name", "Lisbon")
    nodes = page.all("svg.graph g.node")
    assert {n.get_attribute("data-entity") for n in nodes} == {
        "Lisbon",
        "Max",
        "Ana",
        "Carlos",
        "Sundays",
    }
    assert page.wait_for("svg.graph g.node.centre").get_attribute("data-entity") == "Lisbon"
    assert len(page.all("svg.graph line.edge")) >= 4  # Lisbon to each, plus Max-Carlos
    assert len(page.all(".entity-memories li")) == 3
    page.shoot("entity")
    max_node = next(n for n in nodes if n.get_attribute("data-entity") == "Max")
    max_node.click()  # click to navigate
    page.wait_text("h2.entity-name", "Max")
    assert page.errors() == []


def test_merge_two_entities_after_confirming(page: Page, keyed_server: Any):
    page.start("#/entities?order=text", key=keyed_server.secrets["dana"])
    names = texts(page, "table.entities tbody td:nth-child(2)")
    assert "Lisboa" in names and "Lisbon" in names
    for name in ("Lisboa", "Lisbon"):
        page.wait_for(f"tr[data-entity={name}] input[type=checkbox]").click()
    page.wait_for("button.merge").click()
    dialog = page.wait_for("dialog.confirm-dialog[open]")
    kept = dialog.find_element("css selector", "input[name=keep]:checked")
    assert "Lisbon" in kept.find_element("xpath", "..").text  # the one with more links
    page.shoot("merge-confirm")
    dialog.find_element("css selector", "button[value=ok]").click()
    page.wait_text(".notice", "Merged “Lisboa” into “Lisbon”.")
    names = texts(page, "table.entities tbody td:nth-child(2)")
    assert "Lisboa" not in names and "Lisbon" in names
    lisbon = page.wait_for("tr[data-entity=Lisbon] td.num")
    assert lisbon.text == "4"
    page.shoot("merged")
    assert page.errors() == []


def test_rename_an_entity_after_confirming(page: Page, keyed_server: Any):
    page.start("#/entity/Porto", key=keyed_server.secrets["dana"])
    page.wait_for("button.rename").click()
    field = page.wait_for("dialog.confirm-dialog[open] input[name=new_name]")
    field.clear()
    field.send_keys("Oporto")
    page.wait_for("dialog.confirm-dialog[open] button[value=ok]").click()
    page.wait_text("h2.entity-name", "Oporto")
    page.go("#/entities?order=text")
    names = texts(page, "table.entities tbody td:nth-child(2)")
    assert "Oporto" in names and "Porto" not in names
    page.shoot("renamed")


def test_cancelling_a_merge_changes_nothing(page: Page, keyed_server: Any):
    page.start("#/entities", key=keyed_server.secrets["alice"])
    before = texts(page, "table.entities tbody tr")
    for name in ("Porto", "Carlos"):
        page.wait_for(f"tr[data-entity={name}] input[type=checkbox]").click()
    page.wait_for("button.merge").click()
    page.wait_for("dialog.confirm-dialog[open] button[value=cancel]").click()
    page.go("#/entities?order=links")
    assert texts(page, "table.entities tbody tr") == before


def test_a_read_key_sees_no_edit_buttons(page: Page, keyed_server: Any):
    page.start("#/entities", key=keyed_server.secrets["alice_read"])
    assert page.all("button.merge") == [] and page.all("input[type=checkbox]") == []
    page.go("#/entity/Max")
    assert page.all("button.rename") == [] and page.all("button.merge-into") == []


def test_an_admin_key_picks_the_scope(page: Page, keyed_server: Any):
    page.start("#/memories", key=keyed_server.secrets["admin"])
    assert "Choose a scope" in page.wait_for("section.view").text
    user = page.wait_for("#scope input[name=user_id]")
    assert user.is_enabled()
    user.send_keys("dana\n")
    page.wait_for(".pager")
    assert page.driver.execute_script("return location.hash") == "#/memories?user_id=dana"
    assert len(page.all("table.memories tbody tr")) == len(CONVERSATION)
    page.shoot("admin-scope")


@pytest.mark.parametrize("wrong", ["lmk_not_a_key"])
def test_a_wrong_key_is_asked_again(page: Page, keyed_server: Any, wrong: str):
    page.forget_session()
    page.driver.get(keyed_server.url + "/ui/#/search")
    page.wait_for("dialog.key-dialog[open] input[name=key]").send_keys(wrong + "\n")
    prompt = page.wait_for("dialog.key-dialog[open]")
    assert "refused" in prompt.text
    prompt.find_element("css selector", "input[name=key]").send_keys(
        keyed_server.secrets["alice"] + "\n"
    )
    page.wait_ready()
    assert (
        page.driver.execute_script("return sessionStorage.getItem('linkmem.key')")
        == (keyed_server.secrets["alice"])
    )
