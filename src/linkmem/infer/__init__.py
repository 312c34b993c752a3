"""``add(..., infer=True)``: an LLM turns messages into facts and keeps memories current.

The pipeline, two LLM calls per add whatever the number of facts:

1. ``extract``: one call turns the messages (with speaker and date) into short facts.
2. ``reconcile``: the facts are embedded in one batch and the scope is searched for similar
   memories; one call decides per fact ADD, UPDATE, DELETE or NONE, seeing labels, not ids
   (skipped when the scope holds nothing similar: every fact is then an ADD).
3. ``apply``: every decision is written in one transaction, exactly as the raw calls write.

An LLM failure raises ``LLMUnavailable`` or ``LLMInvalidOutput`` and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from linkmem import validation as v
from linkmem.config import Settings
from linkmem.errors import ConfigError
from linkmem.infer.apply import Models, plan_changes, prepare
from linkmem.infer.extract import extract_facts, turns_of
from linkmem.infer.llm import ChatClient
from linkmem.infer.reconcile import decide, similar_memories
from linkmem.threads import single_threaded_blas
from linkmem.types import Scope

if TYPE_CHECKING:
    from linkmem.memory import Memory

__all__ = ["ChatClient", "build_llm", "infer_add"]


def build_llm(settings: Settings) -> ChatClient | None:
    """The configured LLM client, or None when ``llm.base_url`` is not set."""
    if not settings.llm.base_url:
        return None
    return ChatClient(settings.llm)


def require_llm(client: ChatClient | None) -> ChatClient:
    if client is None:
        raise ConfigError(
            "infer=True needs an LLM and none is configured: pass llm={'base_url': "
            "'http://127.0.0.1:8080/v1', 'model': '...'}, set LINKMEM_LLM_BASE_URL and "
            "LINKMEM_LLM_MODEL, or add an [llm] section to config.toml; or use infer=False"
        )
    return client


def infer_add(
    memory: Memory, items: Sequence[Any], metadata: Sequence[Any], scope: Scope
) -> dict[str, Any]:
    """The ``infer=True`` branch of ``Memory.add_batch`` (items and scope as it takes them)."""
    client = require_llm(memory.llm)
    settings = memory.settings
    metas = [v.validate_metadata(m, settings.max_metadata_bytes) for m in metadata]
    turns = turns_of(items, settings.max_text_chars, datetime.now(UTC).date().isoformat())
    llm = settings.llm
    facts = extract_facts(client, turns, llm.max_facts, settings.max_text_chars, llm.extract_prompt)
    if not facts:
        return {"results": []}
    with single_threaded_blas():
        vectors = memory.embedder.embed_batch([f.text for f in facts])
        similar = similar_memories(
            memory.store,
            scope,
            facts,
            vectors,
            llm.candidates_per_fact,
            llm.max_candidates,
        )
    decisions = decide(client, facts, similar, settings.max_text_chars, llm.reconcile_prompt)
    changes = plan_changes(decisions, facts, turns, metas, scope, settings.max_metadata_bytes)
    if not changes:
        return {"results": []}
    models = Models(
        memory.embedder, memory.extractor, memory.retrieval, settings.max_metadata_bytes
    )
    with single_threaded_blas():
        work = prepare(changes, models, {f.text: vec for f, vec in zip(facts, vectors)})
    return {"results": memory.store.run_in_transaction(lambda: work(memory.store))}
