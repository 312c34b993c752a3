"""Searches of one store give the same results in every process, whatever PYTHONHASHSEED (the
per-process salt of ``str`` hashes, so of set and dict-of-set orders): the BM25 of each memory
(keyword_search, in numpy from the cached postings and in SQL), the bm25-only ranking and the
full ranking, ids and scores to the last bit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.eval.locomo import load_locomo
from linkmem.eval.runner import add_conversations

DATA = Path(__file__).parents[1] / "data" / "synthetic_conversation_small.json"

#: Run in a fresh interpreter: opens the store, searches every question with each ablation and
#: prints ids and scores (``repr``: every bit of the float).
SEARCH = """
import json, sys
from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.eval.locomo import load_locomo
from linkmem.eval.runner import ABLATIONS
from linkmem.filters import parse_filters
from linkmem.rank.terms import query_terms
from linkmem.types import Scope

store, data, config = sys.argv[1:4]
memory = Memory(store, embedder=FakeEmbedder(64), store="sqlite", config_file=config)
USER = parse_filters({"session": 1})
out = []
for conv in load_locomo(data):
    for question in conv.questions:
        terms = query_terms(question.question)
        scope = Scope(user_id=conv.sample_id)
        out.append([repr(s) for s in memory.store.keyword_search(terms, scope, 50)])
        out.append(
            [repr(s) for s in memory.store.keyword_search(terms, scope, 50, USER)]
        )
        for name in ("bm25", "full"):
            found = memory.search(
                question.question, user_id=conv.sample_id, top_k=25, signals=ABLATIONS[name]
            )
            out.append([(hit["id"], repr(hit["score"])) for hit in found["results"]])
memory.close()
print(json.dumps(out))
"""


def _search(store: Path, config: Path, seed: str) -> list:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, str(store), str(DATA), str(config)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.slow
def test_same_results_under_every_hash_seed(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    store = tmp_path / "seeds.db"
    memory = Memory(store, embedder=FakeEmbedder(64), store="sqlite", config_file=config)
    try:
        add_conversations(memory, load_locomo(DATA), lambda _message: None)
    finally:
        memory.close()
    first, second, third = (_search(store, config, seed) for seed in ("1", "2", "3"))
    assert sum(len(found) > 1 for found in first) > 10  # rankings, not empty answers
    assert first == second == third
