"""The CLI against a real SQLite file in tmp_path, with the fake embedder and real spaCy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from cli_helpers import command_paths, data, run

from linkmem.cli import app


def add(text: str, *extra: str) -> dict[str, Any]:
    return data("add", text, "-u", "alice", *extra)["results"][0]


def listed(*scope: str) -> list[dict[str, Any]]:
    return data("list", *(scope or ("-u", "alice")))["results"]


# memories ------------------------------------------------------------------------------------
def test_add_get_and_list(cli_env: Path):
    first = add("I adopted a dog named Max", "--metadata", '{"topic": "pets"}')
    assert first["event"] == "ADD" and first["user_id"] == "alice"
    assert first["metadata"] == {"topic": "pets"}
    second = add("Max loves the park", "--role", "assistant")
    assert second["role"] == "assistant"
    assert data("get", first["id"])["memory"] == "I adopted a dog named Max"
    assert [m["id"] for m in listed()] == [second["id"], first["id"]]  # newest first
    assert [m["id"] for m in data("list", "-u", "alice", "--limit", "1")["results"]] == [
        second["id"]
    ]
    pets = data("list", "-u", "alice", "--filters", '{"topic": "pets"}')["results"]
    assert [m["id"] for m in pets] == [first["id"]]
    assert (cli_env / "memory.db").is_file()


def test_human_output_shows_the_memory():
    memory = add("My sister Emma lives in Lisbon")
    out = run("list", "-u", "alice").stdout
    assert memory["id"] in out and "Emma lives in Lisbon" in out
    explained = run("search", "Where does Emma live?", "-u", "alice", "--explain").stdout
    assert "Emma" in explained and "boost" in explained and "via" not in explained


def test_explain_shows_the_entity_hop():
    add("Joanna: I watched Dune and loved the desert planet story")
    add("Priya: I loved the desert planet story in class")
    add("Nate: Dune was great, what a planet")
    query = ("search", "loved the desert planet story", "-u", "alice", "--explain")
    hits = {h["memory"]: h["score_details"] for h in data(*query)["results"]}
    assert hits["Nate: Dune was great, what a planet"]["hop_entity"] == "Dune"
    assert "via" in run(*query).stdout


def test_search_explain_has_score_parts():
    add("I adopted a dog named Max")
    add("Max loves chasing tennis balls")
    add("I am allergic to peanuts")
    hits = data("search", "How is Max doing?", "-u", "alice", "--explain", "--top-k", "2")
    assert len(hits["results"]) == 2
    for hit in hits["results"]:
        details = hit["score_details"]
        assert {"dense", "bm25", "entity_boost", "entity", "score"} <= set(details)
        assert details["entity"] == "Max" and details["entity_boost"] > 0
    plain = data("search", "Max", "-u", "alice", "--threshold", "0.99")
    assert plain["results"] == []


def test_update_delete_and_history():
    memory = add("Max loves the park")
    updated = data("update", memory["id"], "--text", "Max loves the beach", "-m", '{"a": 1}')
    assert updated["results"][0]["memory"] == "Max loves the beach"
    assert data("get", memory["id"])["metadata"] == {"a": 1}
    assert data("delete", memory["id"])["results"] == [{"id": memory["id"], "event": "DELETE"}]
    run("get", memory["id"], code=1)
    events = [e["event"] for e in data("history", memory["id"])["results"]]
    assert events == ["ADD", "UPDATE", "DELETE"]


def test_delete_all_needs_scope_and_yes():
    add("one")
    data("add", "two", "-u", "bob")
    run("delete-all", code=1)  # no scope
    refused = run("delete-all", "-u", "alice", code=2)  # stdin is not a terminal
    assert "--yes" in refused.stderr
    assert len(listed()) == 1
    assert len(data("delete-all", "-u", "alice", "--yes")["results"]) == 1
    assert listed() == [] and len(listed("-u", "bob")) == 1


def test_reset(cli_env: Path):
    add("one")
    run("reset", code=2)
    assert data("reset", "--yes") == {"reset": True}
    assert listed() == []


def test_global_db_option(tmp_path: Path):
    db = tmp_path / "elsewhere" / "other.db"
    run("--db", str(db), "add", "kept elsewhere", "-u", "alice")
    assert db.is_file()
    assert listed() == []
    assert len(data("--db", str(db), "list", "-u", "alice")["results"]) == 1


def test_global_collection_option():
    run("--collection", "work", "add", "in the work collection", "-u", "alice")
    assert listed() == []
    assert len(data("--collection", "work", "list", "-u", "alice")["results"]) == 1


# errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("get", "no-such-id"), 1),
        (("delete", "no-such-id", "-u", "alice"), 1),
        (("history", "no-such-id"), 1),
        (("update", "no-such-id", "--text", "x"), 1),
        (("add", "no scope"), 1),
        (("list",), 1),
        (("search", "q"), 1),
        (("add", "x", "-u", "alice", "--metadata", "{bad"), 2),
        (("add", "x", "-u", "alice", "--metadata", "[1, 2]"), 1),
        (("list", "-u", "alice", "--filters", "not json"), 2),
        (("search", "q", "-u", "alice", "--top-k", "0"), 1),
        (("search", "q", "-u", "alice", "--top-k", "many"), 2),
        (("entities", "memories", "nobody", "-u", "alice"), 1),
        (("entities", "list", "-u", "alice", "--order", "size"), 2),
        (("no-such-command",), 2),
    ],
)
def test_error_exit_codes(args: tuple[str, ...], code: int):
    result = run(*args, code=code)
    assert result.stdout == "" or code == 2
    if code == 1:
        assert result.stderr.startswith("Error: ")


def test_error_message_names_the_id():
    assert "'no-such-id'" in run("get", "no-such-id", code=1).stderr


# import --------------------------------------------------------------------------------------
def write_lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_import_jsonl(tmp_path: Path):
    path = write_lines(
        tmp_path / "memories.jsonl",
        [
            {"text": "Max is a golden retriever", "metadata": {"source": "chat"}},
            "",
            {"text": "Emma lives in Lisbon"},
            {"text": "Bob likes tea", "user_id": "bob"},
            {
                "messages": [
                    {"role": "user", "content": "I moved to Porto"},
                    {"role": "assistant", "content": "Porto is lovely"},
                ]
            },
            {"text": "Agent note", "agent_id": "helper"},
        ],
    )
    report = data("import", str(path), "-u", "alice", "--batch-size", "2")
    assert report["records"] == 5 and report["memories"] == 6
    assert report["batches"] == 4  # alice: 2 + 1, bob: 1, alice+helper: 1
    scopes = {
        json.dumps({k: v for k, v in s.items() if k != "memories"}): s["memories"]
        for s in report["scopes"]
    }
    assert scopes[json.dumps({"user_id": "alice"})] == 4
    assert scopes[json.dumps({"user_id": "bob"})] == 1
    assert scopes[json.dumps({"user_id": "alice", "agent_id": "helper"})] == 1
    alice = {m["memory"]: m for m in listed()}
    assert alice["Max is a golden retriever"]["metadata"] == {"source": "chat"}
    assert alice["Porto is lovely"]["role"] == "assistant"
    assert alice["Agent note"]["agent_id"] == "helper"
    assert [m["memory"] for m in listed("-u", "bob")] == ["Bob likes tea"]


def test_import_conversation_list(tmp_path: Path):
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "My dog Max is three", "name": "sam"},
                {"role": "assistant", "content": "Max sounds great"},
            ],
            indent=2,
        )
    )
    report = data("import", str(path), "-r", "session-1")
    assert report["memories"] == 2 and report["scopes"] == [{"run_id": "session-1", "memories": 2}]
    memories = listed("-r", "session-1")
    assert {m["memory"] for m in memories} == {"My dog Max is three", "Max sounds great"}
    assert {m.get("actor_id") for m in memories} == {"sam", None}


def test_import_conversation_object_with_metadata_and_scope(tmp_path: Path):
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            {
                "user_id": "carol",
                "metadata": {"source": "export"},
                "messages": [{"role": "user", "content": "I play the cello"}],
            }
        )
    )
    run("import", str(path), "-u", "alice")
    (memory,) = listed("-u", "carol")
    assert memory["memory"] == "I play the cello" and memory["metadata"] == {"source": "export"}
    assert listed() == []


def test_import_human_report(tmp_path: Path):
    path = write_lines(tmp_path / "m.jsonl", [{"text": "one"}, {"text": "two"}])
    out = run("import", str(path), "-u", "alice").stdout
    assert "Imported 2 memories" in out and "user=alice" in out


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"metadata": {}}', "needs exactly one of 'text' or 'messages'"),
        ('{"text": "  "}', "text is empty"),
        ('{"text": "x", "metdata": {}}', "unknown key(s) metdata"),
        ('{"text": "x", "metadata": [1]}', "metadata must be a dict"),
        ('{"text": "x", "user_id": "a b"}', "not a valid id"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_import_bad_line_names_it_and_writes_nothing(tmp_path: Path, bad_line: str, message: str):
    rows = [{"text": f"good {i}"} for i in range(5)]
    path = write_lines(tmp_path / "m.jsonl", [*rows[:2], bad_line, *rows[2:]])
    result = run("import", str(path), "-u", "alice", "--batch-size", "1", code=1)
    assert "line 3" in result.stderr and message in result.stderr
    assert listed() == []


def test_import_needs_a_scope(tmp_path: Path):
    path = write_lines(tmp_path / "m.jsonl", [{"text": "one"}])
    assert "line 1" in run("import", str(path), code=1).stderr


def test_import_bad_document_and_missing_file(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('[{"role": "user", "content": "x"},')
    assert "not valid JSON" in run("import", str(path), "-u", "alice", code=1).stderr
    run("import", str(tmp_path / "missing.jsonl"), "-u", "alice", code=2)
    run("import", str(path), "-u", "alice", "--batch-size", "0", code=2)


# entities ------------------------------------------------------------------------------------
def test_entity_commands():
    max_memory = add("I adopted a dog named Max")
    add("Max and Emma walked to Lisbon Park")
    add("Emma lives in Lisbon")
    names = {e["entity"]: e for e in data("entities", "list", "-u", "alice")["results"]}
    assert names["Max"]["link_count"] == 2
    assert data("entities", "list", "-u", "alice", "--order", "text", "--limit", "1")["results"]
    linked = data("entities", "memories", "max", "-u", "alice")
    assert linked["entity"]["entity"] == "Max" and len(linked["results"]) == 2
    related = data("entities", "related", "Max", "-u", "alice")["results"]
    assert "Emma" in {r["entity"] for r in related}
    of = data("entities", "of", max_memory["id"])["results"]
    assert [e["entity"] for e in of] == ["Max"]
    renamed = data("entities", "rename", "Max", "Maximilian", "-u", "alice")["results"][0]
    assert renamed["entity"] == "Maximilian" and renamed["id"] == names["Max"]["id"]
    merged = data("entities", "merge", "Emma", "Maximilian", "-u", "alice")["results"][0]
    assert merged["id"] == names["Emma"]["id"]
    run("entities", "memories", "Maximilian", "-u", "alice", code=1)
    out = run("entities", "list", "-u", "alice").stdout
    assert "Emma" in out and "PROPER" in out


# doctor, demo, help --------------------------------------------------------------------------
def test_doctor_reports_ok():
    add("one")
    out = run("doctor").stdout
    assert "OK   spaCy pipeline installed" in out and "FAIL" not in out
    assert "fake:32" in out and "memory.db" in out
    report = data("doctor")
    assert report["ok"] is True and report["status"]["store"]["memories"] == 1
    assert {c["name"] for c in report["checks"]} >= {"embedder embeds a text", "store opens"}


def test_doctor_fails_with_exit_1(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LINKMEM_EMBEDDER", "no-such-provider")
    result = run("doctor", code=1)
    assert "FAIL store opens" in result.stdout and "no-such-provider" in result.stdout


def test_demo_with_fake_embedder_leaves_the_home_alone(cli_env: Path):
    result = data("demo")
    assert len(result["memories"]) == 10 and len(result["questions"]) == 5
    max_hits = result["questions"][0]["results"]
    assert all("Max" in hit["memory"] for hit in max_hits)
    assert not (cli_env / "memory.db").exists()
    assert "Q: How is Max doing?" in run("demo").stdout


@pytest.mark.slow
def test_demo_with_the_real_models(cli_env: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LINKMEM_EMBEDDER")
    result = run("demo")
    assert "Q: How is Max doing?" in result.stdout and "onnx" in result.stdout
    answers = json.loads(run("demo", "--json").stdout)["questions"]
    max_hits = answers[0]["results"]
    assert [h["score_details"]["entity"] for h in max_hits] == ["Max"] * 3
    assert not (cli_env / "memory.db").exists()


EXPECTED = {
    "add",
    "search",
    "list",
    "get",
    "update",
    "delete",
    "delete-all",
    "history",
    "import",
    "export",
    "doctor",
    "check",
    "reset",
    "demo",
    "entities",
}


def test_every_expected_command_is_registered():
    top = {path[0] for path in command_paths() if len(path) == 1}
    assert EXPECTED <= top
    subs = {path[1] for path in command_paths() if path[:1] == ("entities",) and len(path) == 2}
    assert subs == {"list", "memories", "related", "merge", "rename", "of"}


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "linkmem")
def test_every_command_has_help(path: tuple[str, ...]):
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    assert (command.help or "").strip(), f"{' '.join(path)} has no help text"
    assert "Usage:" in run(*path, "--help").stdout
