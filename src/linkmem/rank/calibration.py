"""Cosine calibration: one embedder's cosines mapped onto the scale the constants assume.

The cosine constants of ``RetrievalConfig`` were measured with all-MiniLM-L6-v2, where two
unrelated sentences score about 0.1. Other embedders crowd their cosines near 1 (e5: 0.8 for
unrelated sentences), so the dense signal spans a fraction of its range and every threshold
passes. The map keeps 1 at 1 (a text is itself under every embedder) and stretches the rest
so the embedder's unrelated level lands on MiniLM's:

    calibrated = 1 - (1 - cosine) * scale,   scale = (1 - REFERENCE) / (1 - unrelated)

``unrelated`` is the mean cosine between the fixed, mutually unrelated ``PROBE_TEXTS``, a
property of the embedder alone (not of the stored data), so it is measured once per embedder.
MiniLM measures ``REFERENCE`` itself (scale 1: nothing changes).
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from linkmem.config import RetrievalConfig

if TYPE_CHECKING:
    from linkmem.embed.base import Embedder
    from linkmem.store.base import Store

#: Store meta key of the measured calibration: ``{"embedder": id/dim, "unrelated": mean}``.
META_KEY = "cosine_calibration"

#: Short everyday sentences on unrelated subjects (no shared names, topics or wording).
PROBE_TEXTS: tuple[str, ...] = (
    "I finally fixed the leaking kitchen tap this morning.",
    "The train to Glasgow was cancelled because of snow.",
    "My grandmother taught me how to knit scarves.",
    "We adopted a grey kitten from the shelter last week.",
    "The quarterly tax report is due on Friday.",
    "He scored two goals in the second half.",
    "Photosynthesis turns sunlight into chemical energy.",
    "Can you recommend a good sushi place downtown?",
    "The violin needs new strings before the concert.",
    "Our flight landed in Lisbon an hour late.",
    "She is learning to code in Rust during the evenings.",
    "The roof of the old barn collapsed in the storm.",
    "I prefer green tea over coffee in the afternoon.",
    "The museum opened a new exhibition about ancient Egypt.",
    "My laptop battery drains too quickly lately.",
    "They planted tomatoes and basil in the backyard.",
    "The dentist said I should floss more often.",
    "Interest rates went up again this quarter.",
    "We hiked to the lake and saw a family of ducks.",
    "The printer on the third floor is out of toner.",
    "He proposed to her on a beach at sunset.",
    "The recipe calls for two cups of flour and an egg.",
    "Our team lost the chess tournament in the final round.",
    "The new bridge will open to traffic next spring.",
    "I have been reading a novel about a lighthouse keeper.",
    "The baby started walking just before her first birthday.",
    "A volcano erupted on a remote island in the Pacific.",
    "Please remember to water the plants while I am away.",
    "The bakery on the corner sells the best croissants.",
    "My car failed its annual inspection because of the brakes.",
    "The choir rehearses every Tuesday in the church hall.",
    "Scientists discovered a new species of frog in the rainforest.",
)

#: Mean cosine between the ``PROBE_TEXTS`` under all-MiniLM-L6-v2 (int8 ONNX, the default
#: embedder): the unrelated level the cosine constants of ``RetrievalConfig`` assume.
REFERENCE_UNRELATED = 0.0523
#: The embedder that defines the reference scale (linkmem's default).
REFERENCE_MODEL_ID = "onnx:all-MiniLM-L6-v2-int8"
#: A measured scale this close to 1 is the reference embedder on another runtime (fp32 vs
#: int8 MiniLM: within 0.002): left at 1 so its scores are exactly the reference ones.
SAME_SCALE_TOLERANCE = 0.01


def unrelated_cosine(vectors: np.ndarray) -> float:
    """Mean cosine over all distinct pairs of ``vectors`` (one row each, any norm)."""
    rows = np.asarray(vectors, dtype=np.float64)
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    sims = rows @ rows.T
    n = len(rows)
    if n < 2:
        raise ValueError("need at least two vectors")
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


def cosine_scale(unrelated: float, reference: float = REFERENCE_UNRELATED) -> float:
    """The stretch that moves ``unrelated`` to ``reference`` while 1 stays 1."""
    if not unrelated < 1.0:
        raise ValueError(f"an unrelated cosine of {unrelated} leaves no scale to calibrate")
    scale = (1.0 - reference) / (1.0 - unrelated)
    return 1.0 if abs(scale - 1.0) <= SAME_SCALE_TOLERANCE else scale


def calibrated_cosine(cosine: float, scale: float) -> float:
    """A raw cosine on the reference scale, clamped at 0."""
    if scale == 1.0:
        return max(0.0, cosine)  # exactly the raw cosine (no rounding through 1 - x)
    return max(0.0, 1.0 - (1.0 - cosine) * scale)


def calibrated_cosines(cosines: np.ndarray, scale: float) -> np.ndarray:
    """``calibrated_cosine`` of each of ``cosines`` (the same float64 operations)."""
    if scale == 1.0:
        return np.maximum(0.0, cosines)
    return np.maximum(0.0, 1.0 - (1.0 - cosines) * scale)


def raw_cosine(calibrated: float, scale: float) -> float:
    """The raw cosine that calibrates to ``calibrated`` (for thresholds the store applies)."""
    return 1.0 - (1.0 - calibrated) / scale


def calibrate(config: RetrievalConfig, scale: float) -> RetrievalConfig:
    """``config`` for an embedder of this ``scale``: the fused score reads cosines on the
    reference scale (``cosine_scale``), and the thresholds compared with raw cosines (entity
    search, name match, entity merge) become the raw cosines that calibrate to the
    reference thresholds. ``config`` must be uncalibrated (``cosine_scale`` 1)."""
    if config.cosine_scale != 1.0:
        raise ValueError("config is already calibrated")
    if scale == 1.0:
        return config
    return replace(
        config,
        cosine_scale=scale,
        entity_search_min_similarity=raw_cosine(config.entity_search_min_similarity, scale),
        name_match_similarity=raw_cosine(config.name_match_similarity, scale),
        entity_merge_similarity=raw_cosine(config.entity_merge_similarity, scale),
    )


def measured_scale(store: Store, embedder: Embedder) -> float:
    """The embedder's cosine scale, measured on ``PROBE_TEXTS`` once per store (one batch of
    32 short texts) and kept in the store's meta as ``cosine_calibration``."""
    stored = store.get_meta(META_KEY)
    current = f"{embedder.model_id}/{embedder.dim}"
    if stored is not None:
        saved = json.loads(stored)
        if saved.get("embedder") == current:
            return cosine_scale(float(saved["unrelated"]))
    unrelated = unrelated_cosine(embedder.embed_batch(list(PROBE_TEXTS)))
    store.set_meta(META_KEY, json.dumps({"embedder": current, "unrelated": unrelated}))
    return cosine_scale(unrelated)


class CosineCalibration:
    """One store's calibration, measured when a search or write first needs it (opening a
    store loads no model). An embedder that knows its scale says so as ``cosine_scale``
    (the reference MiniLM, the test embedder) and is never probed. Thread-safe: the first
    callers wait for one measurement."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self._store, self._embedder = store, embedder
        known = getattr(embedder, "cosine_scale", None)
        if embedder.model_id == REFERENCE_MODEL_ID:
            known = 1.0  # the scale is defined by this model
        self._scale: float | None = None if known is None else float(known)
        self._lock = threading.Lock()

    def scale(self) -> float:
        if self._scale is None:
            with self._lock:
                if self._scale is None:
                    self._scale = measured_scale(self._store, self._embedder)
        return self._scale

    def apply(self, config: RetrievalConfig) -> RetrievalConfig:
        """``config`` calibrated; a config that already carries a scale is kept as given."""
        if config.cosine_scale != 1.0:
            return config
        return calibrate(config, self.scale())
