"""``Memory.check``: audit a store's invariants and, on request, repair what can be rebuilt.

Also ``upgrade_terms``: the re-index of a store written with older keyword terms.

Repairable: postings and document lengths (recomputed from the text), vectors (re-embedded
from the text, without the conversation blending they had), entities no memory names (no
own link: dropped, with the links memories inherited to them) and BM25 statistics
(recomputed). Reported only, since the store cannot know the right answer:
links across scopes and history that does not match a memory.
"""

from __future__ import annotations

from typing import Any

from linkmem.embed.base import Embedder
from linkmem.errors import MigrationError
from linkmem.rank.terms import TERMS_VERSION, terms_batch
from linkmem.store.audit import AuditReport
from linkmem.store.base import Store

#: The store's meta key holding the ``rank.terms.TERMS_VERSION`` its postings were built with.
TERMS_META_KEY = "terms_version"


def check_store(store: Store, embedder: Embedder, repair: bool = False) -> dict[str, Any]:
    report = store.audit()
    if not repair or report.ok:
        return report.to_dict()
    _repair(store, embedder, report)
    return store.audit().to_dict(repaired=True)


def upgrade_terms(store: Store) -> int:
    """Bring a store indexed by an older ``rank.terms`` to ``TERMS_VERSION``: the memories
    whose postings differ from their text's terms now are re-indexed (what ``check --repair``
    does for them; their neighbour words are kept), in one transaction. Returns how many."""
    stored = store.get_meta(TERMS_META_KEY)
    if stored == str(TERMS_VERSION):
        return 0
    if stored is not None and int(stored) > TERMS_VERSION:
        raise MigrationError(
            f"this store's keyword index was written by a newer linkmem (terms version "
            f"{stored}, this one knows {TERMS_VERSION}); upgrade linkmem to open it"
        )
    stale = store.audit().problems["wrong_postings"] if store.count_memories() else []
    with store.transaction():
        _reindex(store, stale)
        store.set_meta(TERMS_META_KEY, str(TERMS_VERSION))
    return len(stale)


def _reindex(store: Store, ids: list[str]) -> None:
    reindex = store.get_memories(ids)
    for record, words in zip(reindex, terms_batch([r.text for r in reindex])):
        store.update_memory(record, None, words)


def _repair(store: Store, embedder: Embedder, report: AuditReport) -> None:
    reembed = store.get_memories(report.problems["bad_vector"])
    vectors = embedder.embed_batch([r.text for r in reembed]) if reembed else []
    with store.transaction():
        _reindex(store, report.problems["wrong_postings"])
        for record, vector in zip(reembed, vectors):
            store.update_memory(record, vector, None)
        store.drop_orphan_entities(report.problems["orphan_entity"])
        store.repair_bookkeeping()
