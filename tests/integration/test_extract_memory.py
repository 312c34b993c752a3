"""The spaCy extractor frees what each batch adds to the shared vocab, even under threads.

spaCy's ``Vocab`` and ``StringStore`` keep every word they see unless the batch runs in a
memory zone; these tests check the sizes (deterministic), not RSS.
"""

from __future__ import annotations

import random
import threading

import pytest

from linkmem.extract import EntityKind, SpacyEntityExtractor
from linkmem.extract import pipeline as pipeline_mod

pytestmark = pytest.mark.slow

SYLLABLES = "bra cho dru fen gri kal lom mir nuv pex quo rin sab tul vek wyn zor".split()


def made_up(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def distinct_texts(count: int, seed: int) -> list[str]:
    """Texts full of words spaCy has never seen: names, places, ids and numbers."""
    rng = random.Random(seed)
    return [
        f"{made_up(rng)}: I met {made_up(rng)} {made_up(rng)} in {made_up(rng)}ville, paid "
        f"${rng.randint(10, 9999)} for {made_up(rng).lower()}_{i}.py and two "
        f"{made_up(rng).lower()} boxes."
        for i in range(count)
    ]


def lexeme_count(nlp) -> int:
    return sum(1 for _ in nlp.vocab)  # len(nlp.vocab) is a counter zones never decrement


@pytest.fixture(scope="module")
def extractor() -> SpacyEntityExtractor:
    extractor = SpacyEntityExtractor()
    extractor.extract_batch(distinct_texts(8, seed=0))  # labels and features a batch adds once
    return extractor


def test_vocab_and_string_store_do_not_grow_across_batches(extractor):
    nlp = extractor._nlp
    strings, lexemes = len(nlp.vocab.strings), lexeme_count(nlp)
    texts = distinct_texts(640, seed=1)
    for start in range(0, len(texts), 32):
        assert extractor.extract_batch(texts[start : start + 32])
    assert len(nlp.vocab.strings) == strings
    assert lexeme_count(nlp) == lexemes
    new_name = texts[-1].split(":")[0]
    assert new_name not in nlp.vocab.strings


def test_entities_are_plain_strings_that_outlive_the_batch(extractor):
    texts = distinct_texts(16, seed=2)
    first = extractor.extract_batch(texts)
    extractor.extract_batch(distinct_texts(64, seed=3))  # later zones reuse the freed memory
    assert extractor.extract_batch(texts) == first
    entities = [e for found in first for e in found]
    assert entities
    assert all(type(e.text) is str and type(e.kind) is EntityKind for e in entities)


def test_four_threads_get_the_single_threaded_results(extractor):
    work = [distinct_texts(96, seed=10 + n) for n in range(4)]
    expected = [extractor.extract_batch(texts) for texts in work]
    got: list[list] = [[] for _ in work]
    start = threading.Barrier(len(work))

    def run(n: int) -> None:
        start.wait()
        for i in range(0, len(work[n]), 8):
            got[n] += extractor.extract_batch(work[n][i : i + 8])

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == expected


def test_a_bounded_lemma_cache_changes_no_result(extractor, monkeypatch):
    texts = distinct_texts(64, seed=4)
    expected = extractor.extract_batch(texts)
    monkeypatch.setattr(pipeline_mod, "LEMMA_CACHE_LIMIT", 5)
    assert extractor.extract_batch(texts) == expected
    assert len(extractor._nlp.get_pipe("lemmatizer").cache) <= 6
