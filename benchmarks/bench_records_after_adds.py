"""Records a SQLite search reads from the file while another connection adds between searches.

    python benchmarks/bench_records_after_adds.py [--size 10000] [--searches 100] [--out FILE]

A reader and a writer ``Memory`` on one file (a stand-in embedder, so the store's work is
most of a search; the default entity extractor): the writer loads ``--size`` memories
(``bench_core.make_texts``), the reader searches 100 times to fill its caches, then
``--searches`` times, each right after one ``add`` by the writer. Prints and writes
(``--out``, default ``benchmarks/results/records_after_adds.json``) the records the reader
read from SQLite (``get_memories``) in those searches, the records of the scope its cache
holds whole at the end, and the searches' p50.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_core import make_queries, make_texts

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.types import Scope

SCOPE = Scope(user_id="u")


def opened(path: Path) -> Memory:
    return Memory(path, embedder=FakeEmbedder(dim=384))


def counted_reads(store: Any) -> list[int]:
    """The number of ids of each ``get_memories`` the store answers from the file."""
    reads: list[int] = []
    read = store.get_memories

    def counting(ids: Any) -> Any:
        reads.append(len(ids))
        return read(ids)

    store.get_memories = counting
    return reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--searches", type=int, default=100)
    default_out = Path(__file__).parent / "results" / "records_after_adds.json"
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        reader, writer = opened(Path(tmp) / "m.db"), opened(Path(tmp) / "m.db")
        texts = make_texts(args.size, seed=2)
        for start in range(0, args.size, 1000):
            writer.add_batch(texts[start : start + 1000], user_id=SCOPE.user_id)
        queries = make_queries(100 + args.searches, seed=5)
        for query in queries[:100]:
            reader.search(query, user_id=SCOPE.user_id)
        reads = counted_reads(reader.store)
        writes = make_texts(args.searches, seed=9)
        times = []
        for write, query in zip(writes, queries[100:], strict=True):
            writer.add(write, user_id=SCOPE.user_id)
            start = time.perf_counter()
            reader.search(query, user_id=SCOPE.user_id)
            times.append((time.perf_counter() - start) * 1e3)
        out = {
            "size": args.size,
            "searches": args.searches,
            "records_read": sum(reads),
            "reads": len(reads),
            "held_records": reader.store.record_cache.held(SCOPE),
            "search_p50_ms": round(statistics.median(times), 2),
        }
        reader.close()
        writer.close()
    print(json.dumps(out))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
