"""Aliases a conversation gives its names (entities.aliases), through ``Inheritance``, and
end to end: a memory that calls Pickle "the dog" is found by a question naming Pickle."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkmem import Memory
from linkmem.entities.aliases import Aliases
from linkmem.entities.inherit import Inheritance
from linkmem.extract.base import EntityKind, ExtractedEntity

PROPER, TOPIC = EntityKind.PROPER, EntityKind.TOPIC


def _e(text: str, kind: EntityKind = PROPER) -> ExtractedEntity:
    return ExtractedEntity(text, kind)


def _keys(rows: list[list[ExtractedEntity]]) -> list[list[str]]:
    return [[e.key for e in row] for row in rows]


def _referred(aliases: Aliases, message: str, speaker: str | None = None) -> list[str]:
    return [e.text for e in aliases.referred(message, speaker)]


@pytest.mark.parametrize(
    ("introduction", "name", "later"),
    [
        ("We adopted a lurcher named Pickle.", "Pickle", "The lurcher chewed a shoe."),
        ("We've got a dog! A spaniel cross called Sprout.", "Sprout", "The dog can open doors."),
        ("My sister Anna is visiting.", "Anna", "My sister loves it here."),
        ("Rex, our old beagle, sleeps all day.", "Rex", "Is the old beagle ok?"),
    ],
)
def test_an_introduced_noun_calls_the_name(introduction: str, name: str, later: str) -> None:
    aliases = Aliases()
    assert _referred(aliases, later, "a") == []  # nothing learnt yet
    aliases.learn(introduction, "a", [_e(name), _e("shoe", TOPIC)])
    assert _referred(aliases, later, "a") == [name]


def test_possessives_follow_whose_alias_it_is() -> None:
    aliases = Aliases()
    aliases.learn("My sister Anna is visiting.", "ana", [_e("Anna")])
    assert _referred(aliases, "Say hi to your sister!", "wren") == ["Anna"]
    assert _referred(aliases, "My sister is here too.", "wren") == []  # Wren's own sister
    assert _referred(aliases, "My sister loves dogs.", "ana") == ["Anna"]
    assert _referred(aliases, "Your sister called.", "ana") == []
    assert _referred(aliases, "The sister act was great.", "wren") == ["Anna"]


def test_what_is_not_an_alias() -> None:
    aliases = Aliases()
    aliases.learn("I met someone named David and a neighbour called Gunnar.", "a", [_e("David")])
    assert _referred(aliases, "Someone knocked.", "a") == []  # too vague to learn
    assert _referred(aliases, "The neighbour waved.", "a") == []  # Gunnar is no entity here
    aliases.learn("My colleague Rob joined.", "a", [_e("Rob")])
    assert _referred(aliases, "My colleagues and I went out.", "a") == []  # a plural
    aliases.learn("We met at a place called Mono.", "a", [_e("Mono", TOPIC)])  # not a name
    assert _referred(aliases, "The place was loud.", "a") == []


def test_a_later_introduction_replaces_the_earlier_one() -> None:
    aliases = Aliases()
    aliases.learn("We adopted a dog named Max.", "a", [_e("Max")])
    aliases.learn("Then a dog named Biscuit came too.", "a", [_e("Biscuit")])
    assert _referred(aliases, "The dog is asleep.", "b") == ["Biscuit"]


TEXTS = [
    "Wren: We've got a dog! A spaniel cross called Sprout, from the rescue.",
    "Ana: Aww!",
    "Wren: The dog has worked out how to open the treat cupboard.",
]
EXTRACTED = [[_e("Wren"), _e("Sprout")], [_e("Ana")], [_e("Wren"), _e("treat cupboard", TOPIC)]]


def test_inheritance_appends_aliased_names_as_inherited() -> None:
    rows = _keys(Inheritance(2).apply(TEXTS, EXTRACTED))
    assert rows[2] == ["wren", "treat cupboard", "sprout"]
    assert _keys(Inheritance(2, aliases=False).apply(TEXTS, EXTRACTED))[2] == [
        "wren",
        "treat cupboard",
    ]
    assert _keys(Inheritance(0).apply(TEXTS, EXTRACTED))[2][-1] == "sprout"  # not a window's


DOG_DAYS = [
    "Wren: We've got a dog! A spaniel cross called Sprout, picked him up from the rescue.",
    "Wren: Sprout stole a sock.",
    "Ana: Ha! Socks are his thing.",
    "Wren: Sprout is asleep on my bed again.",
    "Ana: How is the flat?",
    "Wren: Cold. The heating is broken again.",
    "Wren: Sprout says hello.",
    "Wren: The dog has worked out how to open the treat cupboard.",
]


def _rank_of_the_cupboard(path: Path, aliases: bool) -> tuple[int, dict, set[str]]:
    """Where "What has Sprout learned to open?" ranks the last memory, its score parts, and
    the memories linked to Sprout."""
    config = path / "config.toml"
    config.write_text(f"[retrieval]\nentity_aliases = {str(aliases).lower()}\n")
    with Memory(path / "m.db", entities=True, config_file=config) as memory:
        cupboard = memory.add_batch(DOG_DAYS, user_id="u")["results"][-1]["id"]
        found = memory.search(
            "What has Sprout learned to open?", user_id="u", top_k=8, explain=True
        )["results"]
        linked = memory.entity_memories("Sprout", user_id="u")["results"]
    rank = [hit["id"] for hit in found].index(cupboard)
    return rank, found[rank]["score_details"], {m["id"] for m in linked} & {cupboard}


@pytest.mark.slow
def test_a_question_naming_the_pet_finds_the_memory_that_calls_it_the_dog(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    on, parts, linked = _rank_of_the_cupboard(tmp_path_factory.mktemp("on"), True)
    off, plain, unlinked = _rank_of_the_cupboard(tmp_path_factory.mktemp("off"), False)
    assert linked and not unlinked
    assert parts["entity"] == "Sprout" and plain["entity"] is None
    assert on < off and on < 4
