"""The spaCy pipeline loads only what entity extraction uses, and parses exactly as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkmem.extract import pipeline

spacy = pytest.importorskip("spacy")

INSTALLED = [n for n in pipeline.DEFAULT_PIPELINES if spacy.util.is_package(n)]


@pytest.fixture(params=INSTALLED or [pytest.param(None, marks=pytest.mark.skip("no pipeline"))])
def name(request: pytest.FixtureRequest) -> str:
    return request.param


def test_kept_default_tokenizer_equals_the_saved_one(name: str) -> None:
    if not pipeline.saved_tokenizer_is_default(name):
        pytest.skip(f"{name} saved a tokenizer of its own: it is loaded from disk")
    from_disk = spacy.load(name, exclude=list(pipeline.EXCLUDED_COMPONENTS))
    pipeline.clear_cache()
    loaded = pipeline.load_pipeline(name)
    assert loaded.tokenizer.to_bytes() == from_disk.tokenizer.to_bytes()
    text = "Dr. Smith's U.S.-based start-up (don't!) e-mailed bob@x.org at 5:30pm re: C++."
    assert [t.text for t in loaded.tokenizer(text)] == [t.text for t in from_disk(text)]


def test_loaded_pipeline_runs_only_the_components_the_rules_read(name: str) -> None:
    pipeline.clear_cache()
    nlp = pipeline.load_pipeline(name)
    assert set(nlp.pipe_names) == {"tok2vec", "tagger", "parser", "attribute_ruler", "ner"}
    assert not set(pipeline.EXCLUDED_COMPONENTS) & set(nlp.component_names)


def test_unknown_tokenizer_files_are_loaded_from_disk(tmp_path: Path) -> None:
    (tmp_path / "tokenizer").write_bytes(b"not the default")
    assert not pipeline.saved_tokenizer_is_default(str(tmp_path))
    assert not pipeline.saved_tokenizer_is_default(str(tmp_path / "missing"))
    assert not pipeline.saved_tokenizer_is_default("no_such_pipeline_package")
