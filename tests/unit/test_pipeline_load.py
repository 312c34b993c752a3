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
    unshared = {"exclude": ["vocab"]}  # the vocab is compared by the next test
    assert loaded.tokenizer.to_bytes(**unshared) == from_disk.tokenizer.to_bytes(**unshared)
    text = "Dr. Smith's U.S.-based start-up (don't!) e-mailed bob@x.org at 5:30pm re: C++."
    assert [t.text for t in loaded.tokenizer(text)] == [t.text for t in from_disk(text)]


SAMPLES = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie painted a sunset over Lake Tahoe with her kids last weekend.",
    "Dr. Smith moved from Berlin to São Paulo in March 2021 to join Acme Corp.",
    "We're reading 'The Name of the Wind' for book club; it's 662 pages!",
    "Run `pip install linkmem[postgres]` then call Memory.search() on v0.1.0.",
    "My cats Oliver and Luna hate the vacuum cleaner, but love machine learning videos.",
    "Jon's dance studio opened on 5th Avenue; tickets cost $25 each.",
]


def annotations(nlp: object, texts: list[str]) -> list[list[tuple]]:
    return [
        [(t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.ent_iob_, t.ent_type_, t.norm_) for t in d]
        for d in nlp.pipe(texts)  # type: ignore[attr-defined]
    ]


def test_skipped_data_changes_no_annotation(name: str) -> None:
    from_disk = spacy.load(name, exclude=list(pipeline.EXCLUDED_COMPONENTS))
    pipeline.clear_cache()
    loaded = pipeline.load_pipeline(name)
    assert len(loaded.vocab.strings) < len(from_disk.vocab.strings)  # the table was skipped
    assert annotations(loaded, SAMPLES) == annotations(from_disk, SAMPLES)


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
