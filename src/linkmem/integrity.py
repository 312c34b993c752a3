"""``Memory.check``: audit a store's invariants and, on request, repair what can be rebuilt.

Repairable: postings and document lengths (recomputed from the text), vectors (re-embedded
from the text, without the conversation blending they had), entities with no links (dropped)
and BM25 statistics (recomputed). Reported only, since the store cannot know the right answer:
links across scopes and history that does not match a memory.
"""

from __future__ import annotations

from typing import Any

from linkmem.embed.base import Embedder
from linkmem.rank.terms import terms_batch
from linkmem.store.audit import AuditReport
from linkmem.store.base import Store


def check_store(store: Store, embedder: Embedder, repair: bool = False) -> dict[str, Any]:
    report = store.audit()
    if not repair or report.ok:
        return report.to_dict()
    _repair(store, embedder, report)
    return store.audit().to_dict(repaired=True)


def _repair(store: Store, embedder: Embedder, report: AuditReport) -> None:
    reindex = store.get_memories(report.problems["wrong_postings"])
    reembed = store.get_memories(report.problems["bad_vector"])
    vectors = embedder.embed_batch([r.text for r in reembed]) if reembed else []
    with store.transaction():
        for record, words in zip(reindex, terms_batch([r.text for r in reindex])):
            store.update_memory(record, None, words)
        for record, vector in zip(reembed, vectors):
            store.update_memory(record, vector, None)
        store.drop_orphan_entities(report.problems["orphan_entity"])
        store.repair_bookkeeping()
