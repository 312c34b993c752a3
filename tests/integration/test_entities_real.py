"""Entity linking with the real spaCy pipeline and the real ONNX embedder (the defaults)."""

from __future__ import annotations

import threading

import pytest

from linkmem import Memory, staged_write
from linkmem.encoding import CHUNK
from linkmem.search import Signals

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models():
    """Load the default models once; each test gets its own store file."""
    from linkmem.components import LazyExtractor, build_embedder
    from linkmem.config import resolve_settings

    settings = resolve_settings()
    extractor = LazyExtractor(settings)
    extractor.get()
    return build_embedder(settings), extractor


@pytest.fixture
def open_memory(models, tmp_path):
    embedder, extractor = models
    opened = []

    def factory(**kwargs):
        memory = Memory(tmp_path / "real.db", embedder=embedder, extractor=extractor, **kwargs)
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


def entity_links(memory, user="u"):
    return {e["entity"]: e["link_count"] for e in memory.entities(user_id=user)["results"]}


def test_max_and_maxine_stay_two_entities(open_memory):
    memory = open_memory()
    memory.add("I adopted a dog named Max.", user_id="u")
    memory.add("Maxine is my sister and she lives in Boston.", user_id="u")
    memory.add("Max loves the beach.", user_id="u")
    links = entity_links(memory)
    assert links["Max"] == 2 and links["Maxine"] == 1


def test_200_memories_one_entity_200_links(open_memory):
    memory = open_memory()
    memory.add_batch([f"I walked Max around the lake, lap {i}." for i in range(200)], user_id="u")
    assert entity_links(memory)["Max"] == 200


def test_threads_never_lose_a_link_or_duplicate(open_memory):
    memory = open_memory()
    errors = []

    def worker(n):
        try:
            for i in range(5):
                memory.add(f"Max went to Kyoto with Priya, trip {n}.{i}.", user_id="u")
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    links = entity_links(memory)
    assert links["Max"] == links["Kyoto"] == links["Priya"] == 20
    assert len([e for e in links if e.lower() == "max"]) == 1


def test_delete_after_reopen_leaves_no_stale_link(open_memory):
    memory = open_memory()
    ids = [
        r["id"]
        for r in memory.add_batch(
            ["Max chewed my shoes.", "Max and Luna played in Lisbon."], user_id="u"
        )["results"]
    ]
    memory.close()
    again = open_memory()
    again.delete(ids[1])
    assert entity_links(again) == {"Max": 1}
    assert [r["id"] for r in again.entity_memories("Max", user_id="u")["results"]] == [ids[0]]


def test_update_relinks_with_real_extraction(open_memory):
    memory = open_memory()
    mid = memory.add("Max visited Paris.", user_id="u")["results"][0]["id"]
    memory.update(mid, "Luna visited Rome.")
    assert entity_links(memory) == {"Luna": 1, "Rome": 1}


# Closer to the query in MiniLM space than the Max memory is (cosine 0.45-0.52 vs 0.44).
DISTRACTORS = [
    "How is he doing?",
    "How is he doing now?",
    "How is he doing these days?",
    "Is he doing well?",
    "How has he been doing?",
    "How is that guy doing?",
    "How is the little guy doing?",
] * 10


def test_entity_only_match_is_returned(open_memory):
    memory = open_memory()
    for text in DISTRACTORS:  # separate facts, so no conversation context is blended in
        memory.add(text, user_id="u")
    memory.add("Max chewed through the garden hose again.", user_id="u")
    query = "How is Max doing?"
    dense = memory.search(query, user_id="u", top_k=5, signals=Signals(True, False, False))
    assert "Max chewed through the garden hose again." not in [
        r["memory"] for r in dense["results"]
    ]
    linked = memory.search(
        query, user_id="u", top_k=5, explain=True, signals=Signals(True, False, True)
    )["results"]
    hit = next(r for r in linked if r["memory"] == "Max chewed through the garden hose again.")
    assert hit["score_details"]["entity"] == "Max" and hit["score_details"]["entity_boost"] > 0
    full = memory.search(query, user_id="u", top_k=5)["results"]
    assert "Max chewed through the garden hose again." in [r["memory"] for r in full]


def test_a_back_reference_is_linked_to_the_names_just_before_it(open_memory):
    memory = open_memory(retrieval={"entity_inherit_window": 2})
    chat = [
        "Pablo: Rough week: Leo swallowed a sock.",
        "Ines: Oh no! Is he okay?",
        "Pablo: He's fine now, the vet was brilliant.",
    ]
    ids = [r["id"] for r in memory.add_batch(chat, user_id="u")["results"]]
    leo = {r["id"] for r in memory.entity_memories("Leo", user_id="u")["results"]}
    assert leo == set(ids)
    found = memory.search("Who treated Leo?", user_id="u", explain=True)["results"]
    fine = next(r for r in found if r["id"] == ids[2])
    assert fine["score_details"]["entity"] == "Leo" and fine["score_details"]["entity_boost"] > 0
    alone = memory.add("Ines: He is asleep.", user_id="u")["results"][0]["id"]
    assert alone not in {r["id"] for r in memory.entity_memories("Leo", user_id="u")["results"]}
    memory.close()
    default = open_memory(retrieval={"entity_inherit_window": 0})  # off: links what it names
    ids = [r["id"] for r in default.add_batch(chat, user_id="v")["results"]]
    assert [r["id"] for r in default.entity_memories("Leo", user_id="v")["results"]] == ids[:1]


def test_a_reply_to_a_question_is_linked_to_the_names_the_question_asked_about(open_memory):
    memory = open_memory()  # the defaults: window 2, replies inherit
    chat = [
        "Pablo: Did you take Max to the vet?",
        "Ines: Yes, on Monday, all fine.",
        "Pablo: Lunch tomorrow at noon.",
        "Ines: Sounds great.",
    ]
    ids = [r["id"] for r in memory.add_batch(chat, user_id="u")["results"]]
    max_ = {r["id"]: r["link"] for r in memory.entity_memories("Max", user_id="u")["results"]}
    assert max_ == {ids[0]: "own", ids[1]: "inherited"}
    found = memory.search("How did Max do at the vet?", user_id="u", explain=True)["results"]
    reply = next(r for r in found if r["id"] == ids[1])
    assert reply["score_details"]["entity"] == "Max" and reply["score_details"]["entity_boost"] > 0
    memory.close()
    off = open_memory(retrieval={"entity_inherit_replies": False})
    ids = [r["id"] for r in off.add_batch(chat, user_id="v")["results"]]
    assert [r["id"] for r in off.entity_memories("Max", user_id="v")["results"]] == ids[:1]


def test_a_reply_in_the_next_chunk_still_answers_the_question(open_memory):
    memory = open_memory()
    small_talk = [f"Ines: Lunch at noon, note {i}." for i in range(CHUNK - 1)]
    chat = [*small_talk, "Pablo: Did you take Max to the vet?", "Ines: Yes, on Monday."]
    ids = [r["id"] for r in memory.add_batch(chat, user_id="u")["results"]]  # two chunks
    linked = {r["id"]: r["link"] for r in memory.entity_memories("Max", user_id="u")["results"]}
    assert linked == {ids[CHUNK - 1]: "own", ids[CHUNK]: "inherited"}


def test_staged_chunks_carry_back_references_across_their_edges(open_memory, monkeypatch) -> None:
    chat = [
        "Pablo: Lunch tomorrow at noon.",
        "Ines: Sounds great.",
        "Pablo: Leo loved the beach in Lisbon.",
        "Ines: Did he behave?",  # chunk edge before: a back reference to Leo
        "Pablo: Did you take Max to the vet?",
        "Ines: Yes, on Monday, all fine.",
        "Pablo: Great.",
        "Ines: See you at noon.",
        "Pablo: Did Sofia call you back?",
        "Ines: Only this morning.",  # chunk edge before: a reply to the question about Sofia
    ]

    def links(user_id: str, name: str) -> list[tuple[int, str]]:
        order = {
            r["id"]: i for i, r in enumerate(reversed(memory.get_all(user_id=user_id)["results"]))
        }
        found = memory.entity_memories(name, user_id=user_id)["results"]
        return sorted((order[r["id"]], r["link"]) for r in found)

    memory = open_memory()
    memory.add_batch(chat, user_id="whole")
    monkeypatch.setattr(staged_write, "WRITE_CHUNK", 3)
    memory.add_batch(chat, user_id="staged")
    assert {(2, "own"), (3, "inherited")} <= set(links("whole", "Leo"))
    assert links("whole", "Sofia") == [(8, "own"), (9, "inherited")]
    for name in ("Leo", "Max", "Sofia"):
        assert links("staged", name) == links("whole", name)
