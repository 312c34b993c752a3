"""Golden numbers for the pure scoring functions, and SQL BM25 against the formulas."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from linkmem.config import RetrievalConfig
from linkmem.entities.boost import CandidateBoosts
from linkmem.rank import bm25
from linkmem.rank.fusion import BoostKinds, EntityMatch, entity_boost, fuse, link_weight
from linkmem.rank.terms import query_terms, terms
from linkmem.store.base import NewMemory
from linkmem.store.sqlite import SQLiteStore
from linkmem.types import MemoryRecord, Scope


def test_idf_and_term_score_by_hand():
    assert bm25.idf(10, 2) == pytest.approx(math.log(1 + 8.5 / 2.5))
    # tf=2, doc as long as average: idf * 2 * 2.2 / (2 + 1.2)
    assert bm25.term_score(2, 5, 5.0, 1.5, 1.2, 0.75) == pytest.approx(1.5 * 4.4 / 3.2)


def test_squash_is_zero_for_no_match_and_half_at_midpoint():
    assert bm25.squash(0.0, 3, 3.0, 1.0, 12, 1.0) == 0.0
    assert bm25.squash(6.0, 3, 3.0, 1.0, 12, 1.0) == pytest.approx(0.5)
    assert bm25.squash(20.0, 1, 3.0, 1.0, 12, 1.0) > 0.99


@pytest.mark.parametrize("n_terms", [1, 4, 30])
def test_squash_of_an_array_is_each_value_squashed_bit_for_bit(n_terms: int) -> None:
    squash = bm25.squasher(n_terms, 3.0, 1.0, 12, 1.0)
    raw = np.array([0.0, -1.0, 1e-12, 0.5, 6.0, 17.3, 900.0, 1e9, *np.linspace(0.01, 40, 500)])
    assert squash.many(raw).tolist() == [squash(r) for r in raw.tolist()]
    assert squash.many(np.zeros(0)).tolist() == []


def test_link_weight_and_boost_by_hand():
    assert link_weight(1, 0.001) == 1.0
    assert link_weight(11, 0.001) == pytest.approx(1 / 1.1)
    config = RetrievalConfig(entity_boost_weight=0.5)
    assert entity_boost(EntityMatch("cat food", 0.8, 1, ["m1"]), config) == pytest.approx(0.4)


def test_a_name_the_query_names_boosts_without_decay():
    config = RetrievalConfig(entity_boost_weight=0.1, name_boost_weight=0.3)
    hub = EntityMatch("Melanie", 1.0, 400, ["m1"], proper=True)
    assert entity_boost(hub, config) == pytest.approx(0.3)
    similar_name = EntityMatch("Melanie", 0.8, 400, ["m1"], proper=True)
    topic_hub = EntityMatch("dance studio", 1.0, 400, ["m1"])
    decayed = 0.1 * link_weight(400, config.entity_link_decay)
    assert entity_boost(similar_name, config) == pytest.approx(0.8 * decayed)
    assert entity_boost(topic_hub, config) == pytest.approx(decayed)


def test_best_boost_takes_the_maximum_not_the_sum():
    config = RetrievalConfig(entity_boost_weight=0.5)
    matches = [EntityMatch("Max", 0.9, 1, ["m1", "m2"]), EntityMatch("Maxwell", 0.6, 1, ["m1"])]
    boosts = CandidateBoosts(BoostKinds.of(matches, config), config)
    boosts.array(["m1", "m2"], np.array([0.5, 0.4]))  # the candidates and their text scores
    assert boosts.get("m1") == pytest.approx((0.45, "Max"))
    assert boosts.get("m2")[1] == "Max"


def test_fuse_divides_by_a_fixed_total():
    config = RetrievalConfig()
    parts = fuse(0.8, 0.0, 2, (0.25, "Max"), config)
    assert parts.score == pytest.approx((0.8 * config.dense_weight + 0.25) / config.max_score)
    assert fuse(-0.3, 0.0, 2, (0.0, None), config).score == 0.0


def test_a_hop_amplifies_the_cosine():
    config = RetrievalConfig(hop_weight=0.5)
    hopped = fuse(0.8, 0.0, 2, (0.25, "Max"), config, "Little Women")
    assert hopped.score == pytest.approx((0.8 + 0.25 + 0.5 * 0.8) / config.max_score)
    assert (hopped.hop_boost, hopped.hop_entity) == (pytest.approx(0.4), "Little Women")
    assert fuse(-0.2, 5.0, 2, (0.0, None), config, "Little Women").hop_boost == 0.0


def test_the_highest_possible_score_is_one():
    config = RetrievalConfig()
    top = fuse(1.0, 1e6, 1, (config.name_boost_weight, "Max"), config, "Little Women")
    assert top.score == pytest.approx(1.0)


def test_terms_stem_fold_and_drop_stop_words():
    assert terms("The Dogs were RUNNING to Café") == ["dog", "run", "cafe"]
    assert query_terms("dog dogs DOG") == ["dog"]


def test_chat_shorthand_reads_as_the_word_it_stands_for():
    assert terms("my fave pic, thx") == terms("my favorite picture, thanks")
    assert terms("cuz it was my BDAY") == ["my", "birthday"]  # "because": a stop word
    assert terms("a moment, mo, in the U.S. or BC") == ["moment", "mo", "u", "bc"]


CORPUS = [
    "the cat sat on the mat",
    "dogs chase cats in the park",
    "a cat and a dog are friends",
    "the park is full of dogs and dogs",
    "quantum physics lectures",
]


def test_sqlite_bm25_matches_the_formulas(tmp_path):
    store = SQLiteStore(tmp_path / "b.db", dim=2)
    scope = Scope(user_id="u")
    store.put_memories(
        [
            NewMemory(MemoryRecord(f"m{i}", t, scope, {}, "t", "t"), [1.0, 0.0], terms(t))
            for i, t in enumerate(CORPUS)
        ]
    )
    store.put_memories(
        [  # another scope must not change this scope's statistics
            NewMemory(
                MemoryRecord("x", "cat cat cat", Scope(user_id="v"), {}, "t", "t"),
                [1.0, 0.0],
                terms("cat cat cat"),
            )
        ]
    )
    query = query_terms("dog park cat")
    got = dict(store.keyword_search(query, scope, 10))
    docs = [Counter(terms(t)) for t in CORPUS]
    avg = sum(sum(d.values()) for d in docs) / len(docs)
    idfs = {q: bm25.idf(len(docs), sum(1 for d in docs if q in d)) for q in query}
    want = {
        f"m{i}": bm25.score_document(d, sum(d.values()), query, idfs, avg)
        for i, d in enumerate(docs)
    }
    assert set(got) == {k for k, v in want.items() if v > 0}
    for key, value in got.items():
        assert value == pytest.approx(want[key])


def test_contextual_vectors_blend_neighbours_by_hand():
    import numpy as np

    from linkmem.embed.base import l2_normalise
    from linkmem.rank.context import contextual_vectors

    vectors = l2_normalise(np.random.RandomState(0).randn(5, 4))
    got = contextual_vectors(vectors, window=1, weight=0.5)
    for i in range(5):
        around = vectors[max(0, i - 1) : i + 2].sum(0)
        blend = 0.5 * vectors[i] + 0.5 * around / np.linalg.norm(around)
        assert np.allclose(got[i], blend / np.linalg.norm(blend), atol=1e-6)
    assert np.array_equal(contextual_vectors(vectors[:1], 1, 0.5), vectors[:1])
    assert np.array_equal(contextual_vectors(vectors, 1, 0.0), vectors)
