"""The models of a write, run side by side: the embedder on its ONNX threads, NER beside it.

ONNX Runtime releases the GIL while it runs and spaCy spends most of its time in compiled
code, so the entities of one chunk are extracted while the embedder works through the texts:
a batch costs about the slower model, not the sum of both. Texts go through in chunks,
which bounds what one model call holds (spaCy's memory zone, ONNX buffers) however large
the batch; the entity names found in one chunk ride in the next chunk's embedding call.
A long text is read within a budget (``linkmem.long_texts``): its head and tail.

A query needs no NER (``encode_query``): its entities are looked up among the stored ones
(``linkmem.entities.query_entities``), so only the embedder runs, on a side thread while the
search reads what does not need the query's vector (``start_query``).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from linkmem import long_texts
from linkmem.config import RetrievalConfig
from linkmem.embed.base import Embedder
from linkmem.entities.inherit import Inheritance
from linkmem.entities.linker import EntityCollector, LinkPlan
from linkmem.entities.query_entities import QueryEntities, key_spans, name_runs
from linkmem.extract.base import EntityExtractor, ExtractedEntity
from linkmem.side_threads import Beside

#: Texts per model call. Small enough to bound memory and let NER start at once, large
#: enough that each call is efficient (the ONNX embedder batches 64 texts at a time).
CHUNK = 256


@dataclass(frozen=True)
class Encoded:
    """What the models say about a batch: one vector per text (before context blending)
    and, with entity linking on, the batch's entities."""

    vectors: np.ndarray
    plan: LinkPlan | None


def encode_batch(
    texts: Sequence[str],
    embedder: Embedder,
    extractor: EntityExtractor | None,
    config: RetrievalConfig,
    inheritance: Inheritance | None = None,
) -> Encoded:
    """Embed ``texts`` and (when ``extractor`` is given) find and embed their entities; the
    models read each text within the config's long-text budget (``long_texts.budget_of``).
    ``inheritance``: the back-reference state of the write call ``texts`` are part of (a
    staged batch's chunks share one), else a new one."""
    budget = long_texts.budget_of(config)
    chunks = _chunks(budget.for_embedding(texts))
    if extractor is None:
        return Encoded(_stack([embedder.embed_batch(c) for c in chunks], embedder.dim), None)
    ner = ThreadPoolExecutor(1, thread_name_prefix="linkmem-ner")
    try:
        found = [
            ner.submit(extractor.extract_batch, c) for c in _chunks(budget.for_entities(texts))
        ]
        return _embed_beside(chunks, found, embedder, EntityCollector(config, inheritance))
    finally:
        ner.shutdown(wait=True, cancel_futures=True)


def _chunks(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + CHUNK] for i in range(0, len(texts), CHUNK)]


def _embed_beside(
    chunks: list[list[str]],
    found: list[Future[list[list[ExtractedEntity]]]],
    embedder: Embedder,
    collector: EntityCollector,
) -> Encoded:
    rows: list[np.ndarray] = []
    entity_vectors: dict[str, np.ndarray] = {}
    waiting: list[str] = []  # entity keys found in the previous chunk, not yet embedded
    for chunk, entities in zip(chunks, found, strict=True):
        out = embedder.embed_batch(chunk + collector.texts(waiting))
        rows.append(out[: len(chunk)])
        entity_vectors.update(zip(waiting, out[len(chunk) :]))
        waiting = collector.add(entities.result(), chunk)
    if waiting:
        entity_vectors.update(zip(waiting, embedder.embed_batch(collector.texts(waiting))))
    return Encoded(_stack(rows, embedder.dim), collector.plan(entity_vectors))


def _stack(rows: list[np.ndarray], dim: int) -> np.ndarray:
    return np.concatenate(rows) if rows else np.zeros((0, dim), dtype=np.float32)


@dataclass(frozen=True)
class QueryEncoding:
    """A query's embedding under way beside the caller, and its entity spans (known at once;
    the vectors of its name runs, if the config embeds any, come with the query's)."""

    rows: Beside[tuple[np.ndarray, np.ndarray]]  # the query's vector, its name runs' rows
    entities: QueryEntities | None

    def vector(self) -> np.ndarray:
        """The query's vector (waits for the embedding; the same array on every call)."""
        return self.rows.result()[0]


def start_query(
    query: str, embedder: Embedder, config: RetrievalConfig, entities: bool = True
) -> QueryEncoding:
    """``encode_query``, its embedding started on the side pool (``side_threads.Beside``)."""
    return _query_encoding(query, embedder, config, entities, beside=True)


def _query_encoding(
    query: str, embedder: Embedder, config: RetrievalConfig, entities: bool, beside: bool
) -> QueryEncoding:
    if not entities:
        return QueryEncoding(Beside(lambda: _query_rows(embedder, [query]), beside), None)
    read = long_texts.budget_of(config).for_entities([query])[0]  # as a write's NER reads
    names = name_runs(read, config.query_names_embedded)
    texts = [query, *(text for _, text in names)]
    rows = Beside(lambda: _query_rows(embedder, texts), beside)
    name_vectors = (lambda: rows.result()[1]) if names else _no_rows(embedder.dim)
    found = QueryEntities(
        tuple(key_spans(read, config.query_entity_words)),
        tuple(run for run, _ in names),
        name_vectors,
        config.max_query_entities,
    )
    return QueryEncoding(rows, found)


def _query_rows(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    vectors = embedder.embed_batch(texts)
    return vectors[0], vectors[1:]


def _no_rows(dim: int) -> np.ndarray:
    return np.zeros((0, dim), dtype=np.float32)


def encode_query(
    query: str, embedder: Embedder, config: RetrievalConfig, entities: bool = True
) -> tuple[np.ndarray, QueryEntities | None]:
    """The query's vector and, when ``entities``, its entity spans (``linkmem.entities.
    query_entities``), with its name runs embedded in the same batch as the query. A long
    query's entities are read within the long-text budget, as a write's are (a key lookup
    of every n-gram of a 200,000-character query would take seconds). Embedded on this
    thread: what a search's model costs alone (the benchmarks' limit)."""
    encoding = _query_encoding(query, embedder, config, entities, beside=False)
    return encoding.vector(), encoding.entities
