"""Writing the new memories of one ``add_batch``: all or nothing, in bounded memory.

A batch of up to ``WRITE_CHUNK`` memories is encoded whole, then written in one transaction.
A larger one is staged: the models run chunk by chunk before the transaction (nothing held
open while they work), each chunk's vectors go to an anonymous temporary file instead of
staying in memory, and the transaction then writes chunk by chunk, reading the vectors back.
So what a call holds beside its records is one chunk's vectors, terms and rows, however large
the batch. It is still one transaction: a failure or a crash leaves nothing of the batch.

Linking a staged batch resolves each chunk's entities against the scope as it stands after
the earlier chunks (as consecutive ``add_batch`` calls would); context blending and the
neighbour words of the keyword index (``linkmem.rank.neighbour_terms``; both off for a batch
of short requests and long answers, ``linkmem.rank.context.for_batch``) read the neighbours
across chunk edges, and the back references (``linkmem.entities.inherit``) carry from chunk to
chunk, so every memory's search vector, postings and inherited links are the ones the whole
batch gives.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import IO

import numpy as np

from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.encoding import encode_batch
from linkmem.entities.inherit import Inheritance
from linkmem.entities.linker import LinkPlan, apply_links, write_call_inheritance
from linkmem.extract.base import EntityExtractor, ExtractedEntity
from linkmem.rank.context import contextual_vectors, for_batch
from linkmem.rank.neighbour_terms import context_terms
from linkmem.rank.terms import terms_batch
from linkmem.records import history_event
from linkmem.store.base import NewMemory, Store
from linkmem.types import MemoryRecord

#: Memories per staged chunk. A LoCoMo conversation (at most ~700 turns) is one chunk, so its
#: linking is the whole batch's; 1,024 vectors, terms and rows are a few MB.
WRITE_CHUNK = 1024


@dataclass(frozen=True)
class Models:
    """What a write encodes with."""

    embedder: Embedder
    extractor: EntityExtractor | None
    config: RetrievalConfig


def write_new(store: Store, models: Models, records: Sequence[MemoryRecord]) -> None:
    """Encode ``records`` and write them, their links and their history in one transaction."""
    config = for_batch(models.config, [r.text for r in records])
    models = replace(models, config=config)
    if len(records) <= WRITE_CHUNK:
        encoded = encode_batch([r.text for r in records], *_model_args(models))
        vectors = contextual_vectors(encoded.vectors, config.context_window, config.context_weight)
        writer = _chunk_writer(store, config, records, range(len(records)), vectors, encoded.plan)
        store.run_in_transaction(writer)
        return
    with tempfile.TemporaryFile(prefix="linkmem-batch-") as spill:
        rows = Rows(spill, models.embedder.dim, len(records))
        inheritance = write_call_inheritance(config)  # carried across the chunks
        staged = [
            _stage(rows, models, records, start, inheritance) for start in _starts(len(records))
        ]

        def write() -> None:
            for chunk in staged:
                vectors, plan = chunk.read(rows, config)
                span = range(chunk.start, chunk.stop)
                _chunk_writer(store, config, records, span, vectors, plan)()

        store.run_in_transaction(write)


def _model_args(models: Models) -> tuple[Embedder, EntityExtractor | None, RetrievalConfig]:
    return models.embedder, models.extractor, models.config


def _starts(n: int) -> range:
    return range(0, n, WRITE_CHUNK)


def _chunk_writer(
    store: Store,
    config: RetrievalConfig,
    batch: Sequence[MemoryRecord],
    span: range,
    vectors: np.ndarray,
    plan: LinkPlan | None,
) -> Callable[[], None]:
    """Writes ``batch[span]`` with their (context-blended) search vectors, their own and
    their neighbours' terms, and their links."""
    records = batch[span.start : span.stop]
    new = [
        NewMemory(r, vec, own, context)
        for r, vec, (own, context) in zip(records, vectors, _keyword_docs(batch, span, config))
    ]
    history = [history_event(r, "ADD", None, r.text, r.created_at) for r in records]

    def write() -> None:
        store.put_memories(new)
        if plan is not None:
            ids = [r.id for r in records]
            apply_links(store, records[0].scope, ids, plan, config)
        store.append_history(history)

    return write


def _keyword_docs(
    batch: Sequence[MemoryRecord], span: range, config: RetrievalConfig
) -> list[tuple[list[str], dict[str, int]]]:
    """Own terms and context terms of ``batch[span]``, its neighbours read across the span's
    edges (only the ``keyword_context_window`` records beyond each edge are tokenised)."""
    window = max(0, config.keyword_context_window) if config.keyword_context_weight > 0 else 0
    lo, hi = max(0, span.start - window), min(len(batch), span.stop + window)
    docs = terms_batch([r.text for r in batch[lo:hi]])
    rows = range(span.start - lo, span.stop - lo)
    contexts = context_terms(
        docs,
        window,
        config.keyword_context_weight,
        config.keyword_context_length_ratio,
        rows,
    )
    return [(docs[i], context) for i, context in zip(rows, contexts)]


class Rows:
    """float32 rows of one width in a file: the batch's memory vectors first, at their
    index in the batch, then entity vectors as they are appended."""

    def __init__(self, file: IO[bytes], dim: int, memories: int) -> None:
        self.file = file
        self.dim = dim
        self.end = memories  # next free row for entity vectors

    def put(self, first: int, rows: np.ndarray) -> None:
        self.file.seek(first * self.dim * 4)
        self.file.write(np.ascontiguousarray(rows, dtype=np.float32).tobytes())

    def append(self, rows: np.ndarray) -> int:
        """Write ``rows`` after every row so far; return the index of the first."""
        first = self.end
        self.put(first, rows)
        self.end += len(rows)
        return first

    def read(self, start: int, stop: int) -> np.ndarray:
        self.file.seek(start * self.dim * 4)
        data = self.file.read((stop - start) * self.dim * 4)
        return np.frombuffer(data, dtype=np.float32).reshape(stop - start, self.dim)


@dataclass(frozen=True)
class StagedChunk:
    """One chunk's model output, its vectors in the spill file."""

    start: int
    stop: int
    total: int  # memories in the whole batch (context blending reads across chunk edges)
    per_memory: list[list[str]] | None
    entities: dict[str, ExtractedEntity]
    entity_keys: list[str]  # the keys whose vectors follow one another from entity_row
    entity_row: int

    def read(self, rows: Rows, config: RetrievalConfig) -> tuple[np.ndarray, LinkPlan | None]:
        """The chunk's search vectors (blended with their neighbours, across chunk edges too)
        and its link plan."""
        window = max(0, config.context_window)
        lo, hi = max(0, self.start - window), min(self.total, self.stop + window)
        around = contextual_vectors(rows.read(lo, hi), window, config.context_weight)
        vectors = around[self.start - lo : self.stop - lo]
        if self.per_memory is None:
            return vectors, None
        stored = rows.read(self.entity_row, self.entity_row + len(self.entity_keys))
        entity_vectors = dict(zip(self.entity_keys, stored))
        return vectors, LinkPlan(self.per_memory, self.entities, entity_vectors)


def _stage(
    rows: Rows,
    models: Models,
    records: Sequence[MemoryRecord],
    start: int,
    inheritance: Inheritance,
) -> StagedChunk:
    stop = min(len(records), start + WRITE_CHUNK)
    texts = [r.text for r in records[start:stop]]
    encoded = encode_batch(texts, *_model_args(models), inheritance)
    rows.put(start, encoded.vectors)
    plan = encoded.plan
    if plan is None:
        return StagedChunk(start, stop, len(records), None, {}, [], 0)
    keys = list(plan.vectors)
    first = rows.append(np.stack([plan.vectors[k] for k in keys])) if keys else 0
    return StagedChunk(start, stop, len(records), plan.per_memory, plan.entities, keys, first)
