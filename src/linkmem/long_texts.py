"""What the models read of a long text: its head and its tail, within a budget of characters.

Model work grows with the text (MiniLM: ~0.4 ms of CPU per word piece, every 256 pieces a
window; spaCy: ~0.3 ms per word), while what a long memory is asked about sits mostly at its
ends: the request or the answer's gist at the start, the aside after a pasted text at the
end. So a text longer than the budget is read as its first and last characters, cut at
sentence (else word) boundaries; the whole text is still stored and indexed for BM25, which
finds a word anywhere in it. Texts within the budget (every LoCoMo turn: the longest is 447
characters) are read whole, unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from linkmem.config import RetrievalConfig
from linkmem.errors import ConfigError

#: Sentence ends (and paragraph breaks) a cut prefers; whitespace when there is none.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+|\n\s*")
_SPACE = re.compile(r"\s+")
#: Between the head and the tail of a cut text (a paragraph break: sentences stay apart).
JOIN = "\n\n"


@dataclass(frozen=True)
class LongTextBudget:
    """How much of one text the embedder and the entity extractor read (characters, 0: all).

    A text of at most ``whole_chars`` (or at most the budget) is read whole; a longer one is
    cut to the budget, ``head_share`` of it from its start and the rest from its end.
    """

    embed_chars: int = 0
    ner_chars: int = 0
    whole_chars: int = 0
    head_share: float = 0.5

    def __post_init__(self) -> None:
        if min(self.embed_chars, self.ner_chars, self.whole_chars) < 0:
            raise ConfigError("long-text budgets must be >= 0 characters (0: no budget).")
        if not 0.0 < self.head_share <= 1.0:
            raise ConfigError(f"head_share must be in (0, 1], got {self.head_share}.")

    def for_embedding(self, texts: Sequence[str]) -> list[str]:
        """What the embedder reads of each text."""
        return [self._read(t, self.embed_chars) for t in texts]

    def for_entities(self, texts: Sequence[str]) -> list[str]:
        """What the entity extractor reads of each text."""
        return [self._read(t, self.ner_chars) for t in texts]

    def _read(self, text: str, budget: int) -> str:
        if budget <= 0 or len(text) <= self.whole_chars:
            return text
        return head_and_tail(text, budget, self.head_share)


def head_and_tail(text: str, budget: int, head_share: float = 0.5) -> str:
    """``text`` if it fits ``budget`` characters (or the budget is 0), else its head and its
    tail (about ``budget`` characters in all) joined by a paragraph break."""
    if budget <= 0 or len(text) <= budget:
        return text
    head_len = int(budget * head_share)
    head = _cut_head(text[:head_len])
    tail_len = budget - head_len
    tail = _cut_tail(text[len(text) - tail_len :]) if tail_len > 0 else ""
    return f"{head}{JOIN}{tail}" if tail else head


def _cut_head(piece: str) -> str:
    """``piece`` up to its last sentence end in its second half, else its last space."""
    ends = [m.end() for m in _SENTENCE_END.finditer(piece) if m.end() >= len(piece) // 2]
    if ends:
        return piece[: ends[-1]].rstrip()
    space = piece.rfind(" ")
    return piece[:space] if space > 0 else piece


def _cut_tail(piece: str) -> str:
    """``piece`` from its first sentence start in its first half, else its first word."""
    for match in _SENTENCE_END.finditer(piece):
        if match.end() > len(piece) // 2:
            break
        if match.end() < len(piece):
            return piece[match.end() :].lstrip()
    space = _SPACE.search(piece)
    return piece[space.end() :] if space and space.end() < len(piece) else piece


def budget_of(config: RetrievalConfig) -> LongTextBudget:
    """The budget a ``RetrievalConfig`` sets (``long_text_*``; measurements there)."""
    return LongTextBudget(
        embed_chars=config.long_text_embed_chars,
        ner_chars=config.long_text_ner_chars,
        whole_chars=config.long_text_whole_chars,
    )
