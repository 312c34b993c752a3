"""``linkmem.components``: what loads when, and what is never imported unless configured."""

from __future__ import annotations

import pytest

from linkmem.components import build_llm, load_embedder_first
from linkmem.config import resolve_settings
from linkmem.embed.fake import FakeEmbedder
from linkmem.errors import ModelUnavailable


class LoadingEmbedder(FakeEmbedder):
    def __init__(self, error: Exception | None = None) -> None:
        super().__init__(dim=8)
        self.loaded = False
        self.error = error

    def load(self) -> LoadingEmbedder:
        if self.error is not None:
            raise self.error
        self.loaded = True
        return self


def test_loads_the_embedder_now() -> None:
    embedder = LoadingEmbedder()
    load_embedder_first(embedder)
    assert embedder.loaded


def test_a_failed_load_raises_at_once() -> None:
    with pytest.raises(ModelUnavailable, match="no model"):
        load_embedder_first(LoadingEmbedder(error=ModelUnavailable("no model")))


def test_embedder_without_load_is_left_alone() -> None:
    load_embedder_first(FakeEmbedder(dim=8))


def test_no_llm_configured_means_no_client() -> None:
    assert build_llm(resolve_settings(env={})) is None
