"""What the models read of a long text (linkmem.long_texts) and how encode_batch applies it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from linkmem.config import RetrievalConfig
from linkmem.embed.fake import FakeEmbedder
from linkmem.encoding import encode_batch
from linkmem.errors import ConfigError
from linkmem.extract.base import EntityKind, ExtractedEntity
from linkmem.long_texts import JOIN, LongTextBudget, budget_of, head_and_tail

SENTENCES = [f"Sentence number {i} talks about topic {i}." for i in range(200)]
LONG = " ".join(SENTENCES)


def test_text_within_budget_or_without_budget_is_unchanged() -> None:
    assert head_and_tail("short text.", 100) == "short text."
    assert head_and_tail(LONG, 0) == LONG
    assert head_and_tail(LONG, len(LONG)) == LONG


def test_long_text_keeps_whole_sentences_of_head_and_tail() -> None:
    view = head_and_tail(LONG, 1000)
    head, tail = view.split(JOIN)
    assert len(view) <= 1000
    assert LONG.startswith(head) and LONG.endswith(tail)
    assert head.endswith(".") and tail.startswith("Sentence number")
    assert len(head) > 250 and len(tail) > 250  # about half each, whole sentences


def test_head_share_one_keeps_the_head_only() -> None:
    view = head_and_tail(LONG, 500, head_share=1.0)
    assert JOIN not in view and LONG.startswith(view) and len(view) <= 500


def test_text_without_sentence_ends_is_cut_at_words() -> None:
    words = " ".join(f"word{i}" for i in range(1000))
    head, tail = head_and_tail(words, 200).split(JOIN)
    assert words.startswith(head + " ") and words.endswith(" " + tail)


def test_one_unbroken_word_is_cut_anywhere() -> None:
    view = head_and_tail("x" * 5000, 100)
    assert view.replace(JOIN, "") == "x" * 100


@pytest.mark.parametrize("kwargs", [{"embed_chars": -1}, {"ner_chars": -5}, {"head_share": 0}])
def test_bad_budget_is_a_config_error(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        LongTextBudget(**kwargs)


class Recorder:
    """An extractor that records what it reads and finds its first two words."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def extract_batch(self, texts: Sequence[str]) -> list[list[ExtractedEntity]]:
        self.read.extend(texts)
        return [[ExtractedEntity(t, EntityKind.TOPIC) for t in text.split()[:2]] for text in texts]


def test_encode_batch_reads_long_texts_within_the_budget() -> None:
    embedder, extractor = FakeEmbedder(), Recorder()
    config = RetrievalConfig(
        long_text_embed_chars=600, long_text_ner_chars=300, long_text_whole_chars=0
    )
    texts = ["a short one", LONG]
    encoded = encode_batch(texts, embedder, extractor, config)
    assert extractor.read == ["a short one", head_and_tail(LONG, 300)]
    assert encoded.vectors[1] == pytest.approx(embedder.embed_batch([head_and_tail(LONG, 600)])[0])
    assert encoded.vectors[0] == pytest.approx(embedder.embed_batch(["a short one"])[0])


def test_encode_batch_without_budget_reads_every_text_whole() -> None:
    embedder, extractor = FakeEmbedder(), Recorder()
    config = RetrievalConfig(long_text_embed_chars=0, long_text_ner_chars=0)
    encoded = encode_batch([LONG], embedder, extractor, config)
    assert extractor.read == [LONG]
    assert encoded.vectors[0] == pytest.approx(embedder.embed_batch([LONG])[0])


def test_texts_up_to_whole_chars_are_read_whole_longer_ones_cut_to_the_budget() -> None:
    budget = LongTextBudget(embed_chars=300, ner_chars=200, whole_chars=1000)
    fits, longer = LONG[:1000], LONG[:1001]
    assert budget.for_embedding([fits]) == [fits] and budget.for_entities([fits]) == [fits]
    assert budget.for_embedding([longer]) == [head_and_tail(longer, 300)]
    assert budget.for_entities([longer]) == [head_and_tail(longer, 200)]


def test_the_default_config_reads_up_to_1000_characters_whole_then_400() -> None:
    budget = budget_of(RetrievalConfig())
    assert budget == LongTextBudget(embed_chars=400, ner_chars=400, whole_chars=1000)
    assert budget.for_embedding([LONG[:1000]]) == [LONG[:1000]]
    assert budget.for_embedding([LONG]) == [head_and_tail(LONG, 400)]
