"""A SQLite driver error mid-write (here: a full disk) is a ``StoreError`` that writes nothing."""

from __future__ import annotations

import pytest

from linkmem import StoreError


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_full_disk_is_a_store_error_and_rolls_back(memory):
    memory.add("Max walks in the park", user_id="u")
    pages = memory.store.db.rows("PRAGMA page_count")[0][0]
    memory.store.db.raw.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreError, match="full"):
        memory.add_batch([f"Ana note {i} " + "words " * 200 for i in range(50)], user_id="u")
    assert len(memory.get_all(user_id="u")["results"]) == 1
    assert memory.check()["ok"]
