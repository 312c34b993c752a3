"""The SQLite search view's cosines: the dense top-k is the store's, and every other
candidate's cosine comes from the same one product of the query with the scope's matrices, so
it does not depend on which other candidates are asked for with it."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.filters import parse_filters
from linkmem.store.prefetch import SearchPlan
from linkmem.store.sqlite.search_reads import SearchReads
from linkmem.types import Scope


def _plan(scope: Scope, vector: np.ndarray) -> SearchPlan:
    return SearchPlan(
        scope=scope,
        filters=None,
        query_vector=lambda: vector,
        dim=len(vector),
        terms=[],
        pool=5,
        dense=True,
        keyword=False,
        entities=None,
        entity_k=10,
        entity_min_similarity=0.5,
        specific_max_links=100,
        hop_max_links=3,
    )


def _filled(path: Path) -> Memory:
    memory = Memory(path, embedder=FakeEmbedder(), entities=False)
    words = ["park", "river", "chess", "violin", "pasta", "kitten", "Paris", "snow"]
    rng = random.Random(3)
    for run in ("a", "b"):  # two scopes under one user: the view reads both matrices
        texts = [" ".join(rng.choices(words, k=5)) for _ in range(40)]
        memory.add_batch(texts, user_id="u", run_id=run)
    return memory


def test_the_top_k_is_the_stores_and_the_others_are_the_scopes_product(tmp_path: Path) -> None:
    with _filled(tmp_path / "m.db") as memory:
        store, scope = memory.store, Scope(user_id="u")
        vector = memory.embedder.embed_batch(["chess in the park"])[0]
        view = SearchReads(store, _plan(scope, vector))
        assert view.vector_search(vector, scope, 5) == store.vector_search(vector, scope, 5)
        ids = store.memory_ids(scope)
        asked = ids[::3]
        got = dict(view.vector_search(vector, scope, len(asked), ids=asked))
        plain = dict(store.vector_search(vector, scope, len(asked), ids=asked))
        assert got.keys() == plain.keys() == set(asked)
        assert all(abs(got[i] - plain[i]) < 1e-6 for i in asked)
        matrix = np.concatenate([m.matrix for m in store._scope_matrices(scope)])
        every = (np.asarray([vector], dtype=np.float32) @ matrix.T)[0].tolist()
        by_id = dict(zip([i for m in store._scope_matrices(scope) for i in m.ids], every))
        assert got == {i: by_id[i] for i in asked}


def test_a_cosine_does_not_depend_on_the_other_ids_asked_for(tmp_path: Path) -> None:
    with _filled(tmp_path / "m.db") as memory:
        store, scope = memory.store, Scope(user_id="u")
        vector = memory.embedder.embed_batch(["a grey kitten in the snow"])[0]
        view = SearchReads(store, _plan(scope, vector))
        ids = store.memory_ids(scope)
        whole = dict(view.vector_search(vector, scope, len(ids), ids=ids))
        rng = random.Random(5)
        for _ in range(20):
            some = rng.sample(ids, rng.randint(1, len(ids)))
            assert dict(view.vector_search(vector, scope, len(some), ids=some)) == {
                i: whole[i] for i in some
            }
        assert view.vector_search(vector, scope, 3, ids=[]) == []
        assert view.vector_search(vector, scope, 3, ids=["no such id"]) == []


def test_cosines_looked_up_ahead_are_the_ids_asked_for(tmp_path: Path) -> None:
    with _filled(tmp_path / "m.db") as memory:
        store, scope = memory.store, Scope(user_id="u")
        vector = memory.embedder.embed_batch(["pasta by the river"])[0]
        view = SearchReads(store, _plan(scope, vector))
        ids = store.memory_ids(scope)
        asked = [*ids[::4], "no such id", *ids[1::7]]
        cosines = view.cosines_of(asked)  # before the vector: rows only
        assert cosines is not None
        values, found = cosines(vector)
        assert found.tolist() == [i != "no such id" for i in asked]
        expected = dict(view.vector_search(vector, scope, len(asked), ids=asked))
        kept = [i for i, ok in zip(asked, found.tolist(), strict=True) if ok]
        assert values.dtype == np.float64
        assert dict(zip(kept, values.tolist(), strict=True)) == expected
        filtered = replace(_plan(scope, vector), filters=parse_filters({"topic": "x"}))
        assert SearchReads(store, filtered).cosines_of(asked) is None  # a filter: no matrices
