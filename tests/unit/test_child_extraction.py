"""A cold ``linkmem search`` extracts its query's entities in a child process
(``linkmem.extract.child``): same entities as in-process, nothing left running, and any
failure falls back to the in-process extractor."""

from __future__ import annotations

import pytest

from linkmem.components import LazyExtractor
from linkmem.config import Settings
from linkmem.extract import pipeline
from linkmem.extract.child import ChildExtraction

spacy = pytest.importorskip("spacy")
if not any(spacy.util.is_package(n) for n in pipeline.DEFAULT_PIPELINES):
    pytest.skip("no spaCy pipeline installed", allow_module_level=True)

TEXTS = [
    "what did Maria buy in Lisbon",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Run `pip install linkmem[postgres]` then call Memory.search() on v0.1.0.",
    "",
    "Müller flew from São Paulo to 東京 with 'The Name of the Wind'.",
]


def test_the_child_finds_what_this_process_finds() -> None:
    extractor = LazyExtractor(Settings())
    child = ChildExtraction()
    child.send(extractor.pipeline, TEXTS)
    assert child.receive() == extractor.get().extract_batch(TEXTS)
    assert child._process.returncode is not None  # reaped


def test_a_child_never_asked_is_ended_and_reaped() -> None:
    child = ChildExtraction()
    child.close()
    assert child._process.returncode is not None


def test_a_child_that_dies_answers_none() -> None:
    child = ChildExtraction()
    child.send(None, TEXTS)
    child._process.kill()  # a crash before it answers
    assert child.receive() is None


def test_lazy_extractor_takes_the_childs_answer_for_those_texts_only() -> None:
    extractor = LazyExtractor(Settings())
    loaded_here = extractor._loaded is not None
    child = ChildExtraction()
    assert extractor.extract_in_child(child, TEXTS[:2])
    second = ChildExtraction()
    assert not extractor.extract_in_child(second, TEXTS[:2])  # one at a time
    second.close()
    found = extractor.extract_batch(TEXTS[:2])
    assert (extractor._loaded is not None) == loaded_here  # spaCy not loaded for the answer
    assert found == extractor.get().extract_batch(TEXTS[:2])
    other = ChildExtraction()
    assert not extractor.extract_in_child(other, TEXTS)  # loaded now: extracted here
    other.close()
