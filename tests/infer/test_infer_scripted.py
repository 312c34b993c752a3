"""``add(..., infer=True)`` against a scripted OpenAI-compatible server on 127.0.0.1: every
event type, the id mapping, and every LLM failure with its exact outcome and nothing written."""

from __future__ import annotations

import pytest
from llm_fixtures import Reply, answer, decisions, facts

from linkmem import ConfigError, LLMInvalidOutput, LLMUnavailable

pytestmark = pytest.mark.embedded
U = {"user_id": "alice"}


@pytest.fixture
def mem(make_memory, llm_server):
    return make_memory(llm=llm_server.settings())


def snapshot(memory) -> dict:
    """Everything a failed call must leave as it was."""
    records = memory.get_all(**U)["results"]
    return {
        "memories": sorted((r["id"], r["memory"]) for r in records),
        "entities": sorted((e["entity"], e["link_count"]) for e in memory.entities(**U)["results"]),
        "history": {r["id"]: len(memory.history(r["id"])["results"]) for r in records},
    }


def entity_names(memory, memory_id: str) -> set[str]:
    return {e["entity"] for e in memory.memory_entities(memory_id)["results"]}


def consistent(memory) -> None:
    report = memory.check()
    assert report["ok"], report["problems"]


def test_first_add_extracts_facts_and_adds_them_with_one_call(mem, llm_server):
    llm_server.queue(facts("Alice lives in Berlin", "Alice has a dog named Max"))
    out = mem.add("I live in Berlin and my dog is Max", **U, metadata={"topic": "me"}, infer=True)
    events = out["results"]
    assert [e["event"] for e in events] == ["ADD", "ADD"]
    assert [e["memory"] for e in events] == ["Alice lives in Berlin", "Alice has a dog named Max"]
    assert all(e["previous_memory"] is None for e in events)
    assert len(llm_server.requests) == 1  # nothing in the scope to reconcile against
    assert mem.count(**U) == 2
    record = mem.get(events[0]["id"])
    assert record["metadata"]["topic"] == "me"
    (source,) = record["metadata"]["inferred_from"]
    assert source["message"] == 0 and source["role"] == "user"
    assert source["text"] == "I live in Berlin and my dog is Max"
    assert entity_names(mem, events[0]["id"]) == {"Alice", "Berlin"}
    assert entity_names(mem, events[1]["id"]) == {"Alice", "Max"}
    assert [h["event"] for h in mem.history(events[0]["id"])["results"]] == ["ADD"]
    assert mem.search("Alice lives in Berlin", **U)["results"][0]["id"] == events[0]["id"]
    consistent(mem)


def test_update_rewrites_the_memory_and_moves_its_links(mem, llm_server):
    old = mem.add("Alice lives in Berlin", **U)["results"][0]
    llm_server.queue(
        facts("Alice moved to Lisbon"),
        decisions(("f1", "UPDATE", "m1", "Alice lives in Lisbon")),
    )
    (event,) = mem.add("I moved to Lisbon!", **U, infer=True)["results"]
    assert event["event"] == "UPDATE" and event["id"] == old["id"]
    assert event["memory"] == "Alice lives in Lisbon"
    assert event["previous_memory"] == "Alice lives in Berlin"
    assert mem.count(**U) == 1
    assert entity_names(mem, old["id"]) == {"Alice", "Lisbon"}
    names = {e["entity"] for e in mem.entities(**U)["results"]}
    assert "Berlin" not in names  # the orphaned entity went with its last link
    history = mem.history(old["id"])["results"]
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "Alice lives in Berlin"),
        ("UPDATE", "Alice lives in Berlin", "Alice lives in Lisbon"),
    ]
    assert mem.search("Lisbon", **U)["results"][0]["id"] == old["id"]
    assert mem.get(old["id"])["metadata"]["inferred_from"][0]["text"] == "I moved to Lisbon!"
    consistent(mem)


def test_delete_removes_the_contradicted_memory(mem, llm_server):
    old = mem.add("Alice has a dog named Max", **U)["results"][0]
    llm_server.queue(facts("Alice no longer has a dog"), decisions(("f1", "DELETE", "m1", "")))
    (event,) = mem.add("I gave my dog away", **U, infer=True)["results"]
    assert event == {
        "id": old["id"],
        "memory": "Alice has a dog named Max",
        "event": "DELETE",
        "previous_memory": None,
    }
    assert mem.count(**U) == 0
    assert mem.entities(**U)["results"] == []
    assert [h["event"] for h in mem.history(old["id"])["results"]] == ["ADD", "DELETE"]
    consistent(mem)


def test_none_writes_nothing(mem, llm_server):
    mem.add("Alice likes tea", **U)
    before = snapshot(mem)
    llm_server.queue(facts("Alice likes tea"), decisions(("f1", "NONE", "m1", "")))
    assert mem.add("I like tea", **U, infer=True) == {"results": []}
    assert snapshot(mem) == before


def test_one_call_mixes_every_event_in_one_transaction(mem, llm_server):
    berlin = mem.add("Alice lives in Berlin", **U)["results"][0]
    dog = mem.add("Alice has a dog named Max", **U)["results"][0]
    tea = mem.add("Alice likes tea", **U)["results"][0]
    llm_server.queue(
        facts("Alice moved to Lisbon", "Alice gave Max away", "Alice likes tea", "Alice runs"),
    )
    # the labels follow the search order: m{name} becomes the label the prompt gave it
    llm_server.queue(
        decisions(
            ("f1", "UPDATE", "m{berlin}", "Alice lives in Lisbon"),
            ("f2", "DELETE", "m{dog}", ""),
            ("f3", "NONE", "m{tea}", ""),
            ("f4", "ADD", "", "ignored: an ADD stores the fact as extracted"),
        )
    )
    labels = _labels_filler(llm_server, {"berlin": berlin, "dog": dog, "tea": tea})
    out = mem.add(
        [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "Moved to Lisbon, gave Max away, still love tea, I run"},
        ],
        **U,
        infer=True,
    )["results"]
    assert labels.used
    assert [e["event"] for e in out] == ["UPDATE", "DELETE", "ADD"]
    assert len(llm_server.requests) == 2  # two LLM calls for four facts
    assert mem.count(**U) == 3
    added = out[2]
    assert added["memory"] == "Alice runs"
    assert mem.get(added["id"])["metadata"]["inferred_from"][0]["message"] == 1  # system counted
    assert "Max" not in {e["entity"] for e in mem.entities(**U)["results"]}
    assert tea["id"] in {r["id"] for r in mem.get_all(**U)["results"]}
    consistent(mem)


class _labels_filler:  # noqa: N801 - used like a function
    """Rewrites ``m{name}`` in the queued reconciliation answer to the label the prompt gave
    that memory, just before the server sends it."""

    def __init__(self, server, records: dict) -> None:
        self.used = False
        original = server._next

        def patched(body):
            reply = original(body)
            prompt = body["messages"][-1]["content"]
            if reply.content and "m{" in reply.content:
                for name, record in records.items():
                    label = _label_of(prompt, record["memory"])
                    reply.content = reply.content.replace("m{" + name + "}", label)
                self.used = True
            return reply

        server._next = patched


def _label_of(prompt: str, text: str) -> str:
    for line in prompt.splitlines():
        if line.startswith("m") and line.endswith(": " + text):
            return line.split(":", 1)[0]
    raise AssertionError(f"{text!r} was not shown in {prompt!r}")


def test_the_llm_never_sees_real_ids(mem, llm_server):
    old = mem.add("Alice lives in Berlin", **U)["results"][0]
    llm_server.queue(facts("Alice moved to Lisbon"), decisions(("f1", "NONE", "", "")))
    mem.add("I moved to Lisbon", **U, infer=True)
    prompt = llm_server.prompts()[1]
    assert old["id"] not in prompt and "m1: Alice lives in Berlin" in prompt
    schema = llm_server.requests[1]["response_format"]["json_schema"]["schema"]
    per_fact = schema["properties"]["decisions"]
    assert per_fact["required"] == ["f1"]
    assert per_fact["properties"]["f1"]["properties"]["memory"]["enum"] == ["", "m1"]


@pytest.mark.parametrize("memory_field", ["m7", "real-id", "f1"])
def test_an_invented_id_is_rejected_and_nothing_is_applied(mem, llm_server, memory_field):
    berlin = mem.add("Alice lives in Berlin", **U)["results"][0]
    label = berlin["id"] if memory_field == "real-id" else memory_field
    before = snapshot(mem)
    llm_server.queue(
        facts("Alice moved to Lisbon", "Alice has a cat"),
        decisions(("f1", "UPDATE", label, "Alice lives in Lisbon"), ("f2", "ADD", "", "")),
    )
    with pytest.raises(LLMInvalidOutput, match="not a memory label that was shown"):
        mem.add("I moved to Lisbon and got a cat", **U, infer=True)
    assert snapshot(mem) == before
    consistent(mem)


@pytest.mark.parametrize(
    "reply, message",
    [
        (Reply(content='{"facts": [{"text": "Alice lives in'), "not valid JSON"),
        (Reply(content="Sure! Alice lives in Berlin."), "not valid JSON"),
        (answer({"facts": "Alice lives in Berlin"}), "'facts' is not a list"),
        (answer({"facts": [{"text": "Alice lives in Berlin"}]}), "expected exactly"),
        (answer({"facts": [{"text": "x", "sources": [1], "why": "y"}]}), "expected exactly"),
        (answer({"facts": [{"text": "x", "sources": [9]}]}), "message number"),
        (answer({"facts": [{"text": "  ", "sources": [1]}]}), "is empty"),
        (answer({"facts": [{"text": 5, "sources": [1]}]}), "not a string"),
        (answer({"memories": []}), "expected exactly"),
        (answer(["Alice lives in Berlin"]), "not a JSON object"),
        (Reply(content=""), "empty"),
        (Reply(content=None), "empty"),
        (Reply(raw=b'{"choices": []}'), "no choices"),
        (Reply(raw=b"<html>oops</html>"), "not JSON"),
    ],
)
def test_a_bad_extraction_answer_is_llm_invalid_output(mem, llm_server, reply, message):
    llm_server.queue(reply)
    with pytest.raises(LLMInvalidOutput, match=message):
        mem.add("I live in Berlin", **U, infer=True)
    assert mem.count(**U) == 0 and mem.entities(**U)["results"] == []
    assert len(llm_server.requests) == 1  # an invalid answer is not retried


@pytest.mark.parametrize(
    "reply, message",
    [
        (Reply(content="{decisions: []"), "not valid JSON"),
        (answer({"decisions": {}}), "missing f1"),
        (answer({"decisions": [{"fact": "f1", "event": "ADD"}]}), "not an object"),
        (decisions(("f1", "MERGE", "m1", "")), "is not one of ADD"),
        (decisions(("f1", "UPDATE", "", "x")), "names no memory"),
        (decisions(("f1", "ADD", "m1", "x")), "is ADD but names memory"),
        (decisions(("f1", "ADD", "", "x"), ("f9", "ADD", "", "x")), "not a fact shown: 'f9'"),
        (answer({"decisions": {"f1": {"event": "ADD", "why": 1}}}), "expected event"),
        (Reply(content=""), "empty"),
    ],
)
def test_a_bad_reconciliation_answer_writes_nothing(mem, llm_server, reply, message):
    mem.add("Alice lives in Berlin", **U)
    before = snapshot(mem)
    llm_server.queue(facts("Alice moved to Lisbon"), reply)
    with pytest.raises(LLMInvalidOutput, match=message):
        mem.add("I moved to Lisbon", **U, infer=True)
    assert snapshot(mem) == before


def test_one_memory_changed_twice_is_rejected(mem, llm_server):
    mem.add("Alice lives in Berlin", **U)
    before = snapshot(mem)
    llm_server.queue(
        facts("Alice moved to Lisbon", "Alice left Berlin"),
        decisions(("f1", "UPDATE", "m1", "Alice lives in Lisbon"), ("f2", "DELETE", "m1", "")),
    )
    with pytest.raises(LLMInvalidOutput, match="more than one UPDATE or DELETE"):
        mem.add("Moved to Lisbon, left Berlin", **U, infer=True)
    assert snapshot(mem) == before


def test_a_timeout_is_retried_then_llm_unavailable(make_memory, llm_server):
    mem = make_memory(llm=llm_server.settings(timeout=0.3, retries=1))
    llm_server.queue(Reply(delay=1.0, content="{}"), Reply(delay=1.0, content="{}"))
    with pytest.raises(LLMUnavailable, match="failed after 2 attempt"):
        mem.add("I live in Berlin", **U, infer=True)
    assert len(llm_server.requests) == 2
    assert mem.count(**U) == 0


def test_a_500_then_success_is_retried(mem, llm_server):
    llm_server.queue(Reply(status=500), facts("Alice lives in Berlin"))
    (event,) = mem.add("I live in Berlin", **U, infer=True)["results"]
    assert event["event"] == "ADD" and mem.count(**U) == 1
    assert len(llm_server.requests) == 2


def test_a_429_waits_for_retry_after_then_succeeds(mem, llm_server):
    llm_server.queue(Reply(status=429, headers={"Retry-After": "0"}), facts("Alice likes tea"))
    assert mem.add("I like tea", **U, infer=True)["results"][0]["event"] == "ADD"
    assert len(llm_server.requests) == 2


def test_429_every_time_is_llm_unavailable(make_memory, llm_server):
    mem = make_memory(llm=llm_server.settings(retries=2))
    llm_server.queue(*[Reply(status=429) for _ in range(3)])
    with pytest.raises(LLMUnavailable, match="HTTP 429"):
        mem.add("I like tea", **U, infer=True)
    assert len(llm_server.requests) == 3 and mem.count(**U) == 0


def test_a_failing_reconciliation_call_writes_nothing(mem, llm_server):
    mem.add("Alice lives in Berlin", **U)
    before = snapshot(mem)
    llm_server.queue(facts("Alice moved to Lisbon"), *[Reply(status=503) for _ in range(3)])
    with pytest.raises(LLMUnavailable, match="HTTP 503"):
        mem.add("I moved to Lisbon", **U, infer=True)
    assert snapshot(mem) == before


def test_a_refused_key_is_not_retried(mem, llm_server):
    llm_server.queue(Reply(status=401))
    with pytest.raises(LLMUnavailable, match="api_key"):
        mem.add("I like tea", **U, infer=True)
    assert len(llm_server.requests) == 1


def test_no_server_is_llm_unavailable(make_memory):
    settings = {"base_url": "http://127.0.0.1:9/v1", "model": "x", "retries": 1, "backoff": 0}
    mem = make_memory(llm=settings)
    with pytest.raises(LLMUnavailable, match="ConnectError"):
        mem.add("I like tea", **U, infer=True)


def test_structured_output_falls_back_when_the_server_refuses_json_schema(mem, llm_server):
    llm_server.queue(Reply(status=400), facts("Alice likes tea"), facts("Alice likes cake"))
    mem.add("I like tea", **U, infer=True)
    mem.add("I like cake", user_id="bob", infer=True)
    kinds = [r.get("response_format", {}).get("type") for r in llm_server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered
    assert "schema" in llm_server.requests[1]["response_format"]


def test_no_facts_means_no_second_call_and_no_write(mem, llm_server):
    llm_server.queue(answer({"facts": []}))
    assert mem.add("hi there", **U, infer=True) == {"results": []}
    assert len(llm_server.requests) == 1 and mem.count(**U) == 0


def test_speakers_dates_and_sources_reach_the_prompt_and_the_metadata(mem, llm_server):
    llm_server.queue(facts(("Bob will visit Rome on 2024-05-02", [1, 2])))
    messages = [
        {"role": "user", "name": "Bob", "content": "Guess what", "created_at": "2024-05-01"},
        {"role": "user", "name": "Bob", "content": "I fly to Rome tomorrow"},
    ]
    (event,) = mem.add(messages, **U, infer=True)["results"]
    prompt = llm_server.prompts()[0]
    assert "[1] 2024-05-01 Bob (user): Guess what" in prompt
    assert "[2] " in prompt and "Bob (user): I fly to Rome tomorrow" in prompt
    sources = mem.get(event["id"])["metadata"]["inferred_from"]
    assert [s["message"] for s in sources] == [0, 1]
    assert event["actor_id"] == "Bob"


def test_a_fact_without_sources_links_to_every_message_of_the_call(mem, llm_server):
    llm_server.queue(facts(("Alice likes tea", [])))
    messages = [{"role": "user", "content": "tea?"}, {"role": "user", "content": "yes, tea"}]
    (event,) = mem.add(messages, **U, infer=True)["results"]
    assert [s["message"] for s in mem.get(event["id"])["metadata"]["inferred_from"]] == [0, 1]


def test_custom_prompts_replace_the_built_in_ones(make_memory, llm_server):
    settings = llm_server.settings(extract_prompt="EXTRACT!", reconcile_prompt="RECONCILE!")
    mem = make_memory(llm=settings)
    mem.add("Alice likes tea", **U)
    llm_server.queue(facts("Alice likes green tea"), decisions(("f1", "NONE", "m1", "")))
    mem.add("green tea", **U, infer=True)
    systems = [r["messages"][0]["content"] for r in llm_server.requests]
    assert systems == ["EXTRACT!", "RECONCILE!"]


def test_duplicate_facts_are_merged(mem, llm_server):
    llm_server.queue(facts("Alice likes tea", "alice  likes TEA"))
    assert len(mem.add("tea!", **U, infer=True)["results"]) == 1


def test_add_batch_infers_over_all_items_with_their_own_metadata(mem, llm_server):
    llm_server.queue(facts(("Alice likes tea", [1]), ("Alice runs", [2])))
    out = mem.add_batch(["I like tea", "I run"], **U, metadata=[{"n": 1}, {"n": 2}], infer=True)[
        "results"
    ]
    metas = [mem.get(e["id"])["metadata"] for e in out]
    assert [m["n"] for m in metas] == [1, 2]
    assert [m["inferred_from"][0]["item"] for m in metas] == [0, 1]
    assert len(llm_server.requests) == 1


def test_without_an_llm_infer_is_a_config_error(memory):
    with pytest.raises(ConfigError, match="LINKMEM_LLM_BASE_URL"):
        memory.add("I like tea", **U, infer=True)


def test_bad_input_is_refused_before_any_llm_call(mem, llm_server):
    with pytest.raises(ValueError):
        mem.add("", **U, infer=True)
    assert llm_server.requests == []
