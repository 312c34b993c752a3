"""Step 1 of ``infer=True``: the call's messages -> short facts, each with its source messages."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from linkmem import validation as v
from linkmem.errors import InvalidInput, LLMInvalidOutput
from linkmem.infer.llm import ChatClient
from linkmem.infer.prompts import EXTRACT_SYSTEM, extraction_schema, render_conversation

_SPACE = re.compile(r"\s+")
#: How much of a source message a fact's metadata keeps (``inferred_from``).
EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Turn:
    """One message of the call, as the model sees it (``number``) and as the caller passed it
    (``item`` of ``add_batch``, ``index`` in that item's list, system messages counted)."""

    number: int
    item: int
    index: int
    message: v.Message
    date: str

    @property
    def speaker(self) -> str:
        role = self.message.role
        return f"{self.message.name} ({role})" if self.message.name else role

    def source(self, with_item: bool) -> dict[str, Any]:
        """What a fact's ``inferred_from`` metadata says about this message."""
        out: dict[str, Any] = {"item": self.item} if with_item else {}
        out.update({"message": self.index, "role": self.message.role})
        if self.message.name:
            out["name"] = self.message.name
        out["date"] = self.date
        out["text"] = self.message.content[:EXCERPT_CHARS]
        return out


@dataclass(frozen=True)
class Fact:
    text: str
    sources: tuple[int, ...]  # Turn.number of each source message


def turns_of(items: Sequence[Any], max_chars: int, today: str) -> list[Turn]:
    """Every non-system message of every item, validated exactly as a raw add validates it.
    A message dict may carry ``created_at`` (an ISO date or time) as its date."""
    turns: list[Turn] = []
    for item_index, item in enumerate(items):
        kept = v.normalise_messages(item, max_chars)
        raw = [item] if isinstance(item, str | Mapping) else list(item)
        positions = [i for i, m in enumerate(raw) if not _is_system(m)]
        for index, message in zip(positions, kept):
            date = _date_of(raw[index], index) or today
            turns.append(Turn(len(turns) + 1, item_index, index, message, date))
    return turns


def _is_system(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "system"


def _date_of(message: Any, index: int) -> str | None:
    if not isinstance(message, Mapping) or message.get("created_at") is None:
        return None
    date = message["created_at"]
    if not isinstance(date, str) or not 0 < len(date.strip()) <= 64:
        raise InvalidInput(
            f"messages[{index}].created_at must be an ISO date or time string, got {v.shown(date)}"
        )
    return date.strip()


def extract_facts(
    client: ChatClient,
    turns: Sequence[Turn],
    max_facts: int,
    max_chars: int,
    system: str | None = None,
) -> list[Fact]:
    """One LLM call: the facts of ``turns``, checked and deduplicated (case and spacing)."""
    prompt = render_conversation([(t.number, t.date, t.speaker, t.message.content) for t in turns])
    schema = extraction_schema(len(turns))
    answer = client.complete_json(system or EXTRACT_SYSTEM, prompt, schema, "facts")
    facts = parse_facts(answer, len(turns), max_facts, max_chars)
    merged: dict[str, Fact] = {}
    for fact in facts:
        key = _SPACE.sub(" ", fact.text).casefold()
        seen = merged.get(key)
        sources = fact.sources if seen is None else (*seen.sources, *fact.sources)
        merged[key] = Fact(seen.text if seen else fact.text, tuple(dict.fromkeys(sources)))
    return list(merged.values())


def parse_facts(answer: Any, turn_count: int, max_facts: int, max_chars: int) -> list[Fact]:
    """The extraction answer checked against its schema; any deviation is
    ``LLMInvalidOutput`` (nothing has been written yet)."""
    items = exact_object(answer, {"facts"}, "the extraction answer")["facts"]
    if not isinstance(items, list):
        raise LLMInvalidOutput("the extraction answer's 'facts' is not a list")
    if len(items) > max_facts:
        raise LLMInvalidOutput(
            f"the extraction answer has {len(items)} facts, more than llm.max_facts={max_facts}"
        )
    return [_fact(item, i, turn_count, max_chars) for i, item in enumerate(items)]


def _fact(item: Any, i: int, turn_count: int, max_chars: int) -> Fact:
    where = f"facts[{i}]"
    item = exact_object(item, {"text", "sources"}, where)
    text = checked_text(item["text"], f"{where}.text", max_chars)
    if not text:
        raise LLMInvalidOutput(f"{where}.text is empty")
    sources = item["sources"]
    if not isinstance(sources, list) or not all(type(s) is int for s in sources):
        raise LLMInvalidOutput(f"{where}.sources is not a list of message numbers")
    if not sources:  # the model did not say: the fact came from this call's messages
        sources = list(range(1, turn_count + 1))
    if not all(1 <= s <= turn_count for s in sources):
        raise LLMInvalidOutput(
            f"{where}.sources is {sources!r}; each must be a message number 1..{turn_count}"
        )
    return Fact(text, tuple(dict.fromkeys(sources)))


def exact_object(value: Any, keys: set[str], where: str) -> dict[str, Any]:
    """``value`` as a JSON object with exactly ``keys``, else ``LLMInvalidOutput``."""
    if not isinstance(value, dict):
        raise LLMInvalidOutput(f"{where} is {type(value).__name__}, not a JSON object")
    if set(value) != keys:
        raise LLMInvalidOutput(f"{where} has keys {sorted(value)}; expected exactly {sorted(keys)}")
    return value


def checked_text(value: Any, where: str, max_chars: int) -> str:
    """A text the model wrote, stripped; storable and within ``max_chars``."""
    if not isinstance(value, str):
        raise LLMInvalidOutput(f"{where} is {type(value).__name__}, not a string")
    text = value.strip()
    if len(text) > max_chars:
        raise LLMInvalidOutput(f"{where} has {len(text)} characters, more than {max_chars}")
    try:
        v.check_storable(text, where)
    except InvalidInput as e:
        raise LLMInvalidOutput(str(e)) from e
    return text
