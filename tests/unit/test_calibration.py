"""The cosine calibration: embedder scale from unrelated texts, thresholds and fused scores."""

from __future__ import annotations

import numpy as np
import pytest

from linkmem.config import RetrievalConfig
from linkmem.embed.fake import FakeEmbedder
from linkmem.rank.calibration import (
    META_KEY,
    PROBE_TEXTS,
    REFERENCE_UNRELATED,
    CosineCalibration,
    calibrate,
    calibrated_cosine,
    cosine_scale,
    raw_cosine,
    unrelated_cosine,
)
from linkmem.rank.fusion import EntityMatch, entity_boost, fuse
from linkmem.store.sqlite import SQLiteStore


def test_unrelated_cosine_is_the_mean_over_distinct_pairs():
    rows = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])  # any norm
    pairs = [0.0, 1 / np.sqrt(2), 1 / np.sqrt(2)]
    assert unrelated_cosine(rows) == pytest.approx(np.mean(pairs))
    with pytest.raises(ValueError):
        unrelated_cosine(rows[:1])


def test_the_reference_embedder_is_left_alone():
    assert cosine_scale(REFERENCE_UNRELATED) == 1.0
    assert cosine_scale(REFERENCE_UNRELATED + 0.005) == 1.0  # another runtime of the model
    config = RetrievalConfig()
    assert calibrate(config, 1.0) is config
    assert calibrated_cosine(0.37, 1.0) == 0.37 and calibrated_cosine(-0.2, 1.0) == 0.0


def test_a_crowded_embedder_is_stretched_onto_the_reference_scale():
    scale = cosine_scale(0.78)  # multilingual-e5-small's unrelated level
    assert scale == pytest.approx((1 - REFERENCE_UNRELATED) / 0.22)
    assert calibrated_cosine(0.78, scale) == pytest.approx(REFERENCE_UNRELATED)
    assert calibrated_cosine(1.0, scale) == 1.0  # a text is itself under every embedder
    assert calibrated_cosine(0.5, scale) == 0.0  # below the unrelated level: clamped
    assert raw_cosine(calibrated_cosine(0.9, scale), scale) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        cosine_scale(1.0)


def test_calibrate_turns_the_thresholds_into_raw_cosines():
    config = RetrievalConfig()
    scale = cosine_scale(0.78)
    tuned = calibrate(config, scale)
    assert tuned.cosine_scale == scale
    thresholds = ("entity_search_min_similarity", "name_match_similarity")
    for name in (*thresholds, "entity_merge_similarity"):
        raw = getattr(tuned, name)
        assert raw > getattr(config, name)
        assert calibrated_cosine(raw, scale) == pytest.approx(getattr(config, name))
    with pytest.raises(ValueError):
        calibrate(tuned, scale)


def test_fusion_reads_calibrated_cosines():
    scale = cosine_scale(0.78)
    config, tuned = RetrievalConfig(), calibrate(RetrievalConfig(), scale)
    raw = 1 - (1 - 0.6) / scale  # calibrates to 0.6
    assert fuse(raw, 0.0, 2, (0.0, None), tuned, "x").score == pytest.approx(
        fuse(0.6, 0.0, 2, (0.0, None), config, "x").score
    )
    name = EntityMatch("Melanie", raw_cosine(0.95, scale), 400, ["m1"], proper=True)
    assert entity_boost(name, tuned) == pytest.approx(0.95 * tuned.name_boost_weight)
    other = EntityMatch("Caroline", raw_cosine(0.3, scale), 1, ["m1"], proper=True)
    assert entity_boost(other, tuned) == pytest.approx(0.3 * tuned.entity_boost_weight)


def test_the_scale_is_measured_once_per_store(tmp_path):
    class Counting(FakeEmbedder):
        calls = 0
        cosine_scale = None  # measured, as an embedder that does not know its scale

        def embed_batch(self, texts):
            Counting.calls += 1
            return super().embed_batch(texts)

    embedder = Counting()
    store = SQLiteStore(tmp_path / "m.db", dim=embedder.dim)
    try:
        first = CosineCalibration(store, embedder).apply(RetrievalConfig())
        again = CosineCalibration(store, embedder).apply(RetrievalConfig())
        assert Counting.calls == 1 and first == again
        expected = unrelated_cosine(FakeEmbedder().embed_batch(list(PROBE_TEXTS)))
        assert first.cosine_scale == cosine_scale(expected)
        assert str(embedder.dim) in (store.get_meta(META_KEY) or "")
    finally:
        store.close()


def test_a_memory_calibrates_on_first_use_not_on_open(tmp_path):
    class Crowded(FakeEmbedder):
        """Every vector shares one strong direction: unrelated texts score high, as with e5."""

        cosine_scale = None

        def embed_batch(self, texts):
            rows = super().embed_batch(texts)
            rows[:, 0] += 2.0
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    from linkmem import Memory

    embedder = Crowded()
    with Memory(tmp_path / "m.db", embedder=embedder, entities=False) as memory:
        assert embedder.batches == 0  # opening a store runs no model
        assert memory.retrieval.cosine_scale > 2.0
        assert memory.settings.retrieval.cosine_scale == 1.0  # the settings stay as given
        memory.add("Max is a beagle", user_id="u")
        hit = memory.search("Max the beagle", user_id="u", explain=True)["results"][0]
        assert hit["score_details"]["dense"] > 0.9
    with Memory(tmp_path / "m.db", embedder=Crowded(), entities=False) as again:
        assert again.retrieval == memory.retrieval  # read back from the store


def test_a_config_that_carries_a_scale_is_used_as_given(tmp_path):
    from linkmem import Memory

    with Memory(tmp_path / "m.db", embedder=FakeEmbedder(), retrieval={"cosine_scale": 3.0}) as m:
        assert m.retrieval.cosine_scale == 3.0
