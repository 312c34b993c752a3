"""Contract: results of exactly equal score come in the order their memories were written, so
two builds of a store from the same writes rank alike (ids sort by creation: ``linkmem.ids``)."""

from __future__ import annotations

REPEATED = "please check my cover letter for typos"
TEXTS = [REPEATED, "I moved to Lisbon in May", REPEATED, "My sister plays the cello", REPEATED]
TEXTS += [REPEATED, "We adopted a cat called Miso", REPEATED]


def repeated_order(memory, user_id: str) -> list[int]:
    found = memory.search(REPEATED, user_id=user_id, top_k=len(TEXTS))["results"]
    return [r["metadata"]["i"] for r in found if r["memory"] == REPEATED]


def test_equal_scores_come_in_write_order_in_every_build(memory):
    for build in ("first", "second"):
        for i, text in enumerate(TEXTS):  # one at a time: no neighbours to tell repeats apart
            memory.add(text, user_id=build, metadata={"i": i})
    written = [i for i, text in enumerate(TEXTS) if text == REPEATED]
    assert repeated_order(memory, "first") == written
    assert repeated_order(memory, "second") == written
