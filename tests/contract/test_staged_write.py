"""A large ``add_batch`` is staged chunk by chunk (``linkmem.staged_write``): the same memories,
vectors, links and history as one chunk, and still all or nothing."""

from __future__ import annotations

import pytest

from linkmem import staged_write
from linkmem.errors import InvalidInput

pytestmark = pytest.mark.embedded

TEXTS = [
    f"{name} met {other} in {place} about note {i}."
    for i, (name, other, place) in enumerate(
        zip(
            ["Ana", "Bo", "Cy", "Di", "Ed", "Flo", "Gus"] * 3,
            ["Hal", "Ivy", "Jo", "Kai", "Lu"] * 5,
            ["Lisbon", "Kyoto", "Oslo"] * 7,
        )
    )
]


def _search_scores(memory, user_id: str) -> list[tuple[str, float]]:
    hits = memory.search("Ana in Lisbon", user_id=user_id, top_k=21, explain=True)["results"]
    return [(h["memory"], round(h["score_details"]["dense"], 5)) for h in hits]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staged_write, "WRITE_CHUNK", 4)


def test_staged_batch_matches_one_chunk(make_memory, monkeypatch) -> None:
    memory = make_memory()
    memory.add_batch(TEXTS, user_id="whole")
    monkeypatch.setattr(staged_write, "WRITE_CHUNK", 4)
    memory.add_batch(TEXTS, user_id="staged")
    whole, staged = _search_scores(memory, "whole"), _search_scores(memory, "staged")
    assert [m for m, _ in staged] == [m for m, _ in whole]
    assert [s for _, s in staged] == pytest.approx([s for _, s in whole], abs=1e-5)
    assert memory.count(user_id="staged") == len(TEXTS)
    names = {
        (e["entity"], e["link_count"])
        for e in memory.entities(user_id="staged", limit=100)["results"]
    }
    assert names == {
        (e["entity"], e["link_count"])
        for e in memory.entities(user_id="whole", limit=100)["results"]
    }
    listed = memory.get_all(user_id="staged", limit=100)["results"]
    assert [r["memory"] for r in reversed(listed)] == TEXTS  # newest first, batch order kept
    assert all(memory.history(r["id"])["results"][0]["event"] == "ADD" for r in listed)


def test_staged_batch_fails_whole_on_a_store_error(make_memory, small_chunks) -> None:
    memory = make_memory()
    calls = 0
    put = memory.store.put_memories

    def fail_third(new):
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("disk full")
        return put(new)

    memory.store.put_memories = fail_third
    with pytest.raises(RuntimeError):
        memory.add_batch(TEXTS, user_id="u")
    memory.store.put_memories = put
    assert calls == 3
    assert memory.count(user_id="u") == 0
    assert memory.entities(user_id="u")["results"] == []


def test_staged_batch_refuses_a_bad_item_before_the_models(make_memory, small_chunks) -> None:
    memory = make_memory()
    with pytest.raises(InvalidInput):
        memory.add_batch([*TEXTS, {"role": "user"}], user_id="u")
    assert memory.count(user_id="u") == 0
