"""Contract: a store indexed with an older linkmem's keyword terms is re-indexed when opened."""

from __future__ import annotations

import pytest

from linkmem.errors import MigrationError
from linkmem.integrity import TERMS_META_KEY
from linkmem.rank import terms
from linkmem.rank.terms import TERMS_VERSION

#: Terms version 1 dropped first- and second-person words as stop words.
VERSION_1_STOP_WORDS = terms.STOP_WORDS | set(
    "i me my myself im we our ours ourselves you your yours yourself yourselves".split()
)
TEXTS = ["My sister moved to Porto", "Your sister likes Porto", "Porto has bridges"]

pytestmark = pytest.mark.embedded


def written_with_version_1(make_memory, monkeypatch) -> list[str]:
    """Memories written as linkmem with terms version 1 wrote them; the store is closed."""
    with monkeypatch.context() as patch:
        patch.setattr(terms, "STOP_WORDS", VERSION_1_STOP_WORDS)
        old = make_memory()
        ids = [r["id"] for r in old.add_batch(TEXTS, user_id="u")["results"]]
        old.store.set_meta(TERMS_META_KEY, "1")
        assert old.check()["ok"]
        old.close()
    return ids


def test_a_new_store_records_the_terms_version(memory):
    assert memory.store.get_meta(TERMS_META_KEY) == str(TERMS_VERSION)


def test_an_older_store_is_reindexed_once_when_opened(make_memory, monkeypatch):
    ids = written_with_version_1(make_memory, monkeypatch)
    memory = make_memory()
    assert memory.store.get_meta(TERMS_META_KEY) == str(TERMS_VERSION)
    assert memory.check()["ok"]  # every posting matches today's terms of its text
    for query, expected in (("my sister", ids[0]), ("your sister", ids[1])):
        found = memory.search(query, user_id="u", signals={"dense": False})["results"]
        assert found[0]["id"] == expected  # "my" / "your" tell the two sisters apart
    assert memory.store.get_meta(TERMS_META_KEY) == str(TERMS_VERSION)


def test_the_reindex_keeps_neighbour_words(make_memory, monkeypatch):
    written_with_version_1(make_memory, monkeypatch)
    memory = make_memory()
    found = memory.search("bridges sister", user_id="u", signals={"dense": False})["results"]
    assert len(found) == 3  # "Porto has bridges" carries its neighbours' "sister"


def test_a_version_2_store_reads_chat_shorthand_after_the_reindex(make_memory, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(terms, "SHORT_FORMS", {})  # version 2 kept "fave" and "pic" as written
        old = make_memory()
        old.add_batch(["Porto has bridges", "my fave pic is from Porto"], user_id="u")
        old.store.set_meta(TERMS_META_KEY, "2")
        old.close()
    memory = make_memory()
    assert memory.check()["ok"]
    found = memory.search("favorite picture", user_id="u", signals={"dense": False})["results"]
    assert found[0]["memory"] == "my fave pic is from Porto"


def test_a_store_from_a_newer_linkmem_is_refused(make_memory):
    newer = make_memory()
    newer.store.set_meta(TERMS_META_KEY, str(TERMS_VERSION + 1))
    newer.close()
    with pytest.raises(MigrationError, match="upgrade linkmem"):
        make_memory()
