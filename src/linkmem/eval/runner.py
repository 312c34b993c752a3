"""Run the LoCoMo retrieval evaluation: store every turn once, search every question under
each ablation's signals, and return recall@k, add timings and search latencies.

All ablations share one store built with entity linking on; an ablation only changes the
``Signals`` a search uses, so they differ in nothing but the retrieval signals. Nothing is
precomputed for the searches: each one is a plain ``Memory.search`` call, timed end to end.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from linkmem.components import describe
from linkmem.config import RetrievalConfig, with_retrieval
from linkmem.eval.audit import apply_audit, load_audit
from linkmem.eval.folds import fold_table, tune_folds
from linkmem.eval.locomo import Conversation, Question, load_locomo
from linkmem.eval.metrics import aggregate, counts, mean, percentile, recalls
from linkmem.memory import Memory
from linkmem.rank.dates import parse_date
from linkmem.search import Signals

#: Ablation name -> the signals its searches use (in report order).
#: Each ablation is exactly the signals its name lists; "dense+bm25+time" is full without
#: entities, so full minus it is what the entity signal adds.
ABLATIONS: dict[str, Signals] = {
    "dense": Signals(dense=True, keyword=False, entities=False, time=False),
    "bm25": Signals(dense=False, keyword=True, entities=False, time=False),
    "dense+bm25": Signals(dense=True, keyword=True, entities=False, time=False),
    "dense+entities": Signals(dense=True, keyword=False, entities=True, time=False),
    "dense+bm25+time": Signals(dense=True, keyword=True, entities=False, time=True),
    "full": Signals(dense=True, keyword=True, entities=True, time=True),
}
DEFAULT_KS: tuple[int, ...] = (1, 5, 10, 25, 50)
#: Groups of the fold report: the headline, then multi-hop, temporal and adversarial.
FOLD_GROUPS: tuple[str, ...] = ("1-4", "1", "2", "5")
#: Retrieval constants read on the write path: trying another value rebuilds the store.
WRITE_TIME = frozenset(
    {"context_weight", "context_window", "entity_merge_similarity", "max_entities_per_memory"}
)

MemoryFactory = Callable[[Path], Memory]
Progress = Callable[[str], None]


def default_memory(path: Path) -> Memory:
    """The default models, a SQLite store at ``path``, entity linking on."""
    return Memory(path, store="sqlite", entities=True)


def run_locomo(
    data_path: str | Path,
    ks: Iterable[int] = DEFAULT_KS,
    ablations: Iterable[str] = tuple(ABLATIONS),
    memory_factory: MemoryFactory = default_memory,
    out: str | Path | None = None,
    *,
    limit_conversations: int | None = None,
    progress: Progress | None = None,
    folds: bool = False,
    tune: Mapping[str, Sequence[float]] | None = None,
    audit: str | Path | None = None,
) -> dict[str, Any]:
    """Evaluate retrieval on a LoCoMo file; write the result as JSON to ``out`` when given.

    The result keeps, per ablation, every scored question with its ranked ``dia_id``s.
    ``folds``: add the leave-one-conversation-out table (``result["folds"]``). ``tune``: a
    retrieval constant -> values to try; each value is searched with the full system and
    chosen per fold on the other conversations (``result["tuning"]``; see ``eval.folds``).
    ``audit``: score questions on an audit's corrected evidence (``eval.audit``).
    """
    started = time.perf_counter()
    ks_sorted = check_ks(ks)
    names = check_ablations(ablations)
    checked_tune(tune, RetrievalConfig())  # unknown names fail before the store is built
    say = progress or (lambda _message: None)
    conversations, audited = _conversations(data_path, limit_conversations, audit)
    with tempfile.TemporaryDirectory(prefix="linkmem-locomo-") as tmp:
        load_started = time.perf_counter()
        memory = memory_factory(Path(tmp) / "locomo.db")
        try:
            _require_entities(memory, names)
            _warm_up(memory)
            load_seconds = time.perf_counter() - load_started
            setup = {**_setup(memory, conversations, ks_sorted), "audit": audited}
            add = add_conversations(memory, conversations, say)
            results = {
                name: run_ablation(memory, conversations, name, ks_sorted, say) for name in names
            }
            grids = {
                constant: grid_questions(
                    memory,
                    conversations,
                    constant,
                    values,
                    ks_sorted,
                    results,
                    say,
                    rebuild=lambda: memory_factory(Path(tmp) / f"grid-{time.time_ns()}.db"),
                )
                for constant, values in checked_tune(tune, memory.settings.retrieval).items()
            }
            base_config = memory.settings.retrieval
        finally:
            memory.close()
    result = {
        "benchmark": "locomo",
        "data": str(data_path),
        "ks": list(ks_sorted),
        "setup": setup,
        "timing": {
            "load_seconds": load_seconds,
            **add,
            "wall_seconds": time.perf_counter() - started,
        },
        "ablations": results,
    }
    if folds or grids:
        questions = {name: data["questions"] for name, data in results.items()}
        result["folds"] = fold_table(questions, FOLD_GROUPS, ks_sorted)
    if grids:
        result["tuning"] = {
            constant: {
                **tune_folds(grid, getattr(base_config, constant), "1-4", _tuning_k(ks_sorted)),
                "recall": {str(v): aggregate(qs, ks_sorted) for v, qs in sorted(grid.items())},
            }
            for constant, grid in grids.items()
        }
    if out is not None:
        from linkmem.eval.report import write_json

        write_json(result, out)
    return result


def _conversations(
    data_path: str | Path, limit: int | None, audit: str | Path | None
) -> tuple[list[Conversation], dict[str, Any] | None]:
    """The file's conversations, with ``audit``'s evidence when given, and what it changed."""
    conversations = load_locomo(data_path, limit)
    if audit is None:
        return conversations, None
    conversations, changed = apply_audit(conversations, load_audit(audit))
    return conversations, {"path": str(audit), "questions_corrected": changed}


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    values = sorted(set(ks))
    if not values or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in values):
        raise ValueError(f"ks must be positive integers, got {list(ks)!r}")
    return tuple(values)


def check_ablations(ablations: Iterable[str]) -> list[str]:
    names = list(dict.fromkeys(ablations))
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown or not names:
        raise ValueError(f"unknown ablation(s) {unknown!r}; choose from {', '.join(ABLATIONS)}")
    return names


def _tuning_k(ks: Sequence[int]) -> int:
    """Constants are chosen on recall@10 when it is measured, else on the smallest k."""
    return 10 if 10 in ks else min(ks)


def checked_tune(
    tune: Mapping[str, Sequence[float]] | None, defaults: RetrievalConfig
) -> dict[str, list[float]]:
    """Known constant names, each with its default among the values tried."""
    known = {f.name: f for f in fields(RetrievalConfig)}
    out: dict[str, list[float]] = {}
    for name, values in (tune or {}).items():
        if name not in known:
            raise ValueError(f"unknown retrieval constant {name!r}; choose from {sorted(known)}")
        cast = int if isinstance(getattr(defaults, name), int) else float
        out[name] = sorted({cast(v) for v in values} | {getattr(defaults, name)})
    return out


@contextmanager
def _retrieval(memory: Memory, **changes: Any) -> Iterator[Memory]:
    """Search ``memory`` with some retrieval constants changed, then restore them."""
    before = memory.settings
    memory.settings = with_retrieval(before, **changes)
    try:
        yield memory
    finally:
        memory.settings = before


def grid_questions(
    memory: Memory,
    conversations: Sequence[Conversation],
    constant: str,
    values: Sequence[float],
    ks: Sequence[int],
    done: Mapping[str, Any],
    say: Progress,
    *,
    rebuild: Callable[[], Memory],
) -> dict[float, list[dict[str, Any]]]:
    """The full system's scored questions for each value of one constant. A search-time
    constant is changed on the shared store; a write-time one (``WRITE_TIME``) gets a store
    of its own, built by ``rebuild`` and filled again."""
    default = getattr(memory.settings.retrieval, constant)
    grid: dict[float, list[dict[str, Any]]] = {}
    for value in values:
        if value == default and "full" in done:
            grid[value] = done["full"]["questions"]
            continue
        say(f"tuning {constant}={value}")
        if constant not in WRITE_TIME:
            with _retrieval(memory, **{constant: value}):
                grid[value] = run_ablation(memory, conversations, "full", ks, say)["questions"]
            continue
        other = rebuild()
        try:
            other.settings = with_retrieval(other.settings, **{constant: value})
            add_conversations(other, conversations, say)
            grid[value] = run_ablation(other, conversations, "full", ks, say)["questions"]
        finally:
            other.close()
    return grid


def _require_entities(memory: Memory, names: Sequence[str]) -> None:
    if memory.extractor is None and any(ABLATIONS[n].entities for n in names):
        raise ValueError("the entity ablations need a Memory with entity linking on")


def _warm_up(memory: Memory) -> None:
    """Load the models before timing (one throwaway embedding and extraction)."""
    memory.embedder.embed_batch(["warm-up"])
    if memory.extractor is not None:
        memory.extractor.extract_batch(["Warm-up: Alice met Bob in Paris."])


def _setup(memory: Memory, conversations: Sequence[Conversation], ks: Sequence[int]) -> dict:
    questions = [q for c in conversations for q in c.questions]
    scored = [q for q in questions if q.evidence]
    return {
        "embedder": f"{memory.embedder.model_id}/{memory.embedder.dim}",
        "entities": describe(memory.extractor) if memory.extractor else "disabled",
        "conversations": [c.sample_id for c in conversations],
        "memories": sum(len(c.turns) for c in conversations),
        "questions": len(questions),
        "questions_scored": len(scored),
        "questions_without_evidence": len(questions) - len(scored),
        "top_k": max(ks),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def add_conversations(
    memory: Memory, conversations: Sequence[Conversation], say: Progress
) -> dict[str, Any]:
    """One ``add_batch`` per conversation (scope ``user_id=sample_id``), each timed."""
    per_conversation: dict[str, dict[str, float]] = {}
    for conv in conversations:
        texts = [t.memory_text for t in conv.turns]
        metadata = [t.metadata for t in conv.turns]
        start = time.perf_counter()
        times = [parse_date(t.session_date) for t in conv.turns]  # when each turn was said
        memory.add_batch(texts, user_id=conv.sample_id, metadata=metadata, timestamp=times)
        seconds = time.perf_counter() - start
        per_conversation[conv.sample_id] = {"memories": len(texts), "seconds": seconds}
        say(f"added {conv.sample_id}: {len(texts)} turns in {seconds:.1f} s")
    total = sum(c["seconds"] for c in per_conversation.values())
    n = sum(int(c["memories"]) for c in per_conversation.values())
    return {
        "add_seconds": total,
        "add_ms_per_memory": 1000 * total / n if n else None,
        "adds_per_second": n / total if total else None,
        "add_per_conversation": per_conversation,
    }


def run_ablation(
    memory: Memory,
    conversations: Sequence[Conversation],
    name: str,
    ks: Sequence[int],
    say: Progress,
) -> dict[str, Any]:
    """Search every question that has evidence with this ablation's signals."""
    signals = ABLATIONS[name]
    scored: list[dict[str, Any]] = []
    latencies: list[float] = []
    for conv in conversations:
        for question in conv.questions:
            if question.evidence:
                ranking, ms = search_question(memory, conv.sample_id, question, max(ks), signals)
                latencies.append(ms)
                scored.append(_question_result(conv.sample_id, question, ranking, ks))
    say(f"{name}: {len(scored)} searches, p50 {percentile(latencies, 50) or 0:.1f} ms")
    return {
        "signals": asdict(signals),
        "recall": aggregate(scored, ks),
        "counts": counts(scored),
        "search_ms": _latency(latencies),
        "questions": scored,
    }


def search_question(
    memory: Memory, sample_id: str, question: Question, top_k: int, signals: Signals
) -> tuple[list[str], float]:
    """The ranked ``dia_id``s for a question in its conversation's scope, and the search's
    wall time in milliseconds."""
    start = time.perf_counter()
    found = memory.search(question.question, user_id=sample_id, top_k=top_k, signals=signals)
    ms = 1000 * (time.perf_counter() - start)
    return [str(hit["metadata"].get("dia_id")) for hit in found["results"]], ms


def _question_result(
    sample_id: str, question: Question, ranking: list[str], ks: Sequence[int]
) -> dict[str, Any]:
    return {
        "sample_id": sample_id,
        "index": question.index,
        "category": question.category,
        "question": question.question,
        "evidence": list(question.evidence),
        "ranking": ranking,
        "recall": recalls(question.evidence, ranking, ks),
    }


def _latency(values: Sequence[float]) -> dict[str, float | int | None]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "mean": mean(values),
    }
