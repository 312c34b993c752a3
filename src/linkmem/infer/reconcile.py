"""Steps 2 and 3 of ``infer=True``: the existing memories like the new facts, and one LLM
call that decides per fact ADD, UPDATE, DELETE or NONE.

The model never sees a memory id. Memories are shown as labels ``m1``, ``m2``, ... and facts
as ``f1``, ``f2``, ...; the mapping stays here, and an answer with a label that was not
shown (an invented id), a fact left undecided, or a memory changed twice is
``LLMInvalidOutput`` before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from linkmem.errors import LLMInvalidOutput
from linkmem.infer.extract import Fact, checked_text
from linkmem.infer.llm import ChatClient
from linkmem.infer.prompts import (
    RECONCILE_SYSTEM,
    fact_label,
    memory_label,
    reconciliation_schema,
    render_reconciliation,
)
from linkmem.rank.terms import query_terms
from linkmem.store.base import Store
from linkmem.types import MemoryRecord, Scope

EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")


@dataclass(frozen=True)
class Decision:
    fact: int  # index into the facts
    event: str  # ADD | UPDATE | DELETE | NONE
    target: MemoryRecord | None  # the existing memory of UPDATE / DELETE (NONE: optional)
    text: str | None  # the text to store (ADD, UPDATE)


def similar_memories(
    store: Store,
    scope: Scope,
    facts: Sequence[Fact],
    vectors: np.ndarray,
    per_fact: int,
    limit: int,
) -> list[MemoryRecord]:
    """Per fact the dense top ``per_fact`` and the BM25 top ``per_fact`` of the scope, taken
    in turns across facts (each fact's best first) up to ``limit`` memories."""
    lists: list[list[str]] = []
    for fact, vector in zip(facts, vectors):
        found = [mid for mid, _ in store.vector_search(vector, scope, per_fact)]
        terms = query_terms(fact.text)
        if terms:
            found += [mid for mid, _ in store.keyword_search(terms, scope, per_fact)]
        lists.append(list(dict.fromkeys(found)))
    chosen: dict[str, None] = {}
    for rank in range(max((len(x) for x in lists), default=0)):
        for found in lists:
            if rank < len(found) and len(chosen) < limit:
                chosen.setdefault(found[rank])
    return store.get_memories(list(chosen))


def decide(
    client: ChatClient,
    facts: Sequence[Fact],
    memories: Sequence[MemoryRecord],
    max_chars: int,
    system: str | None = None,
) -> list[Decision]:
    """One LLM call when there are memories to reconcile against; with none, every fact is
    an ADD and no call is made."""
    if not memories:
        return [Decision(i, "ADD", None, f.text) for i, f in enumerate(facts)]
    prompt = render_reconciliation([f.text for f in facts], [m.text for m in memories])
    schema = reconciliation_schema(len(facts), len(memories))
    answer = client.complete_json(system or RECONCILE_SYSTEM, prompt, schema, "decisions")
    return parse_decisions(answer, facts, memories, max_chars)


def parse_decisions(
    answer: Any, facts: Sequence[Fact], memories: Sequence[MemoryRecord], max_chars: int
) -> list[Decision]:
    """The reconciliation answer checked and mapped back to real memories."""
    if not isinstance(answer, dict) or set(answer) != {"decisions"}:
        raise LLMInvalidOutput("the reconciliation answer must be {'decisions': {...}} only")
    per_fact = answer["decisions"]
    if not isinstance(per_fact, dict):
        raise LLMInvalidOutput("the reconciliation answer's 'decisions' is not an object")
    labels = [fact_label(i) for i in range(len(facts))]
    missing = [label for label in labels if label not in per_fact]
    unknown = [repr(key) for key in per_fact if key not in labels]
    if missing or unknown:
        raise LLMInvalidOutput(
            "every fact shown needs exactly one decision: missing "
            f"{', '.join(missing) or '-'}; not a fact shown: {', '.join(unknown) or '-'}"
        )
    memory_ids = {memory_label(i): m for i, m in enumerate(memories)}
    decisions = [
        _decision(per_fact[label], i, f"decisions.{label}", facts, memory_ids, max_chars)
        for i, label in enumerate(labels)
    ]
    changed = [d.target.id for d in decisions if d.target and d.event in ("UPDATE", "DELETE")]
    if len(changed) != len(set(changed)):
        raise LLMInvalidOutput("a memory is the target of more than one UPDATE or DELETE")
    return decisions


def _decision(
    item: Any,
    fact: int,
    where: str,
    facts: Sequence[Fact],
    memory_ids: dict[str, MemoryRecord],
    max_chars: int,
) -> Decision:
    if not isinstance(item, dict):
        raise LLMInvalidOutput(f"{where} is {type(item).__name__}, not a JSON object")
    keys = set(item)
    if not {"event"} <= keys <= {"event", "memory", "text"}:
        raise LLMInvalidOutput(f"{where} has keys {sorted(keys)}; expected event, memory, text")
    event = item["event"]
    if event not in EVENTS:
        raise LLMInvalidOutput(f"{where}.event {event!r} is not one of {', '.join(EVENTS)}")
    target = _target(item.get("memory"), where, memory_ids)
    text = checked_text(item.get("text") or "", f"{where}.text", max_chars)
    if event in ("UPDATE", "DELETE") and target is None:
        raise LLMInvalidOutput(f"{where} is {event} but names no memory")
    if event == "ADD" and target is not None:
        raise LLMInvalidOutput(f"{where} is ADD but names memory {item['memory']!r}")
    if event == "ADD":  # the fact as extracted: deciding is not rewriting
        return Decision(fact, event, None, facts[fact].text)
    if event == "UPDATE":
        return Decision(fact, event, target, text or facts[fact].text)
    return Decision(fact, event, target, None)


def _target(label: Any, where: str, memory_ids: dict[str, MemoryRecord]) -> MemoryRecord | None:
    if label is None or label == "":
        return None
    if not isinstance(label, str) or label not in memory_ids:
        raise LLMInvalidOutput(
            f"{where}.memory {label!r} is not a memory label that was shown "
            f"({', '.join(memory_ids)}); nothing was written"
        )
    return memory_ids[label]
