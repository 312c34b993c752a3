"""The spaCy pipeline runs on numpy ops with numpy's BLAS held to one thread, and finds
exactly the entities it finds on thinc's default (blis) ops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from threadpoolctl import threadpool_info

from linkmem.extract import pipeline
from linkmem.extract.spacy import SpacyEntityExtractor

spacy = pytest.importorskip("spacy")
if not any(spacy.util.is_package(n) for n in pipeline.DEFAULT_PIPELINES):
    pytest.skip("no spaCy pipeline installed", allow_module_level=True)

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie painted a sunset over Lake Tahoe with her kids last weekend.",
    "Dr. Smith moved from Berlin to São Paulo in March 2021 to join Acme Corp.",
    "Run `pip install linkmem[postgres]` then call Memory.search() on v0.1.0.",
    "My cats Oliver and Luna hate the vacuum cleaner, but love machine learning videos.",
]


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    pipeline.clear_cache()
    yield
    pipeline.clear_cache()


def test_default_pipeline_runs_on_numpy_ops(fresh_cache: None) -> None:
    info = pipeline.pipeline_info()
    assert info["ops"] == "NumpyOps(use_blis=False)"


def test_numpy_ops_find_what_blis_finds(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    numpy_found = SpacyEntityExtractor().extract_batch(TEXTS)
    pipeline.clear_cache()
    monkeypatch.setattr(pipeline, "OPS", "blis")
    blis = SpacyEntityExtractor()
    assert "use_blis=True" in pipeline.pipeline_info()["ops"]
    assert blis.extract_batch(TEXTS) == numpy_found


def test_parsing_holds_blas_to_one_thread(fresh_cache: None) -> None:
    extractor = SpacyEntityExtractor()
    seen: list[int] = []
    nlp: Any = extractor._nlp
    real_pipe = nlp.pipe

    def recording_pipe(*args: Any, **kwargs: Any) -> Any:
        seen.extend(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")
        return real_pipe(*args, **kwargs)

    nlp.pipe = recording_pipe
    try:
        assert extractor.extract_batch(TEXTS)
    finally:
        del nlp.pipe
    assert seen and set(seen) == {1}
