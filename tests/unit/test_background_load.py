"""``components.load_in_background``: the embedder loads beside the caller, errors wait."""

from __future__ import annotations

import threading

import pytest

from linkmem.components import build_llm, load_in_background
from linkmem.config import resolve_settings
from linkmem.embed.fake import FakeEmbedder


class SlowEmbedder(FakeEmbedder):
    def __init__(self, error: Exception | None = None) -> None:
        super().__init__(dim=8)
        self.loaded = threading.Event()
        self.error = error

    def load(self) -> SlowEmbedder:
        if self.error is not None:
            raise self.error
        self.loaded.set()
        return self


def test_loads_in_another_thread() -> None:
    embedder = SlowEmbedder()
    thread = load_in_background(embedder)
    assert thread is not None and thread is not threading.current_thread()
    thread.join(10)
    assert embedder.loaded.is_set()


def test_a_failed_load_is_left_for_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    thread = load_in_background(SlowEmbedder(error=RuntimeError("no model")))
    assert thread is not None
    thread.join(10)
    assert not thread.is_alive() and escaped == []


def test_embedder_without_load_needs_no_thread() -> None:
    assert load_in_background(FakeEmbedder(dim=8)) is None


def test_no_llm_configured_means_no_client() -> None:
    assert build_llm(resolve_settings(env={})) is None
