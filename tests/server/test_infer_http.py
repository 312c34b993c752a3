"""``infer=True`` over HTTP: a ``linkmem serve`` whose ``llm`` settings point at a scripted
LLM; events come back as from an embedded Memory and LLM failures keep their class."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_fixtures import Reply, ScriptedLLM, decisions, facts
from server_fixtures import ServerProcess

from linkmem import LLMInvalidOutput, LLMUnavailable, RemoteMemory

pytestmark = pytest.mark.remote
U = {"user_id": "alice"}


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def remote(scripted, tmp_path_factory) -> Iterator[RemoteMemory]:
    home = tmp_path_factory.mktemp("infer-server")
    settings = {"sqlite.path": str(home / "memory.db")}
    settings.update({f"llm.{k}": v for k, v in scripted.settings(retries=1).items()})
    server = ServerProcess(settings, home)
    client = RemoteMemory(server.url)
    yield client
    client.close()
    server.stop()


@pytest.fixture
def fresh(remote, scripted) -> RemoteMemory:
    remote.reset()
    scripted.script.clear()
    scripted.requests.clear()
    return remote


def test_events_come_back_over_http(fresh, scripted):
    old = fresh.add("Alice lives in Berlin", **U)["results"][0]
    scripted.queue(
        facts("Alice moved to Lisbon", "Alice has a cat"),
        decisions(("f1", "UPDATE", "m1", "Alice lives in Lisbon"), ("f2", "ADD", "", "")),
    )
    events = fresh.add("I moved to Lisbon and got a cat", **U, infer=True)["results"]
    assert [(e["event"], e["memory"], e["previous_memory"]) for e in events] == [
        ("UPDATE", "Alice lives in Lisbon", "Alice lives in Berlin"),
        ("ADD", "Alice has a cat", None),
    ]
    assert events[0]["id"] == old["id"] and fresh.count(**U) == 2


def test_invalid_output_is_502_llm_invalid_output(fresh, scripted):
    fresh.add("Alice lives in Berlin", **U)
    scripted.queue(facts("Alice moved"), decisions(("f1", "DELETE", "m9", "")))
    with pytest.raises(LLMInvalidOutput, match="not a memory label that was shown"):
        fresh.add("I moved", **U, infer=True)
    assert fresh.count(**U) == 1
    scripted.queue(Reply(content="no json here"))
    response = fresh._http.post(  # the raw answer: status and code
        "/v1/memories", json={"messages": "I moved", "user_id": "alice", "infer": True}
    )
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "llm_invalid_output"


def test_unavailable_llm_is_503_llm_unavailable(fresh, scripted):
    scripted.queue(Reply(status=500), Reply(status=500))
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        fresh.add_batch(["I like tea"], **U, infer=True)
    assert len(scripted.requests) == 2  # the server's client retried; RemoteMemory did not
    assert fresh.count(**U) == 0
