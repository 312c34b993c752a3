"""``linkmem export`` / ``linkmem import`` of an export, and ``linkmem doctor`` on PostgreSQL."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import data, run


def seed(*where: str) -> None:
    run(*where, "add", "I adopted a dog named Max", "-u", "alice", "-m", '{"topic": "pets"}')
    run(*where, "add", "Max met Emma in Lisbon", "-u", "alice", "-a", "coach")
    first = data(*where, "list", "-u", "alice")["results"][-1]["id"]
    run(*where, "update", first, "--text", "I adopted a dog named Max in Porto")


def state(*where: str) -> dict[str, Any]:
    return {
        "memories": data(*where, "list", "-u", "alice")["results"],
        "search": data(*where, "search", "Where is Max?", "-u", "alice", "--explain")["results"],
        "entities": data(*where, "entities", "list", "-u", "alice")["results"],
    }


def test_export_then_import_restores_the_collection(tmp_path: Path):
    seed()
    report = data("export", str(tmp_path / "store.jsonl"))
    assert report["memories"] == 2 and report["history"] == 3 and report["entities"] >= 3
    restored = data("--collection", "copy", "import", str(tmp_path / "store.jsonl"))
    assert {k: restored[k] for k in ("memories", "entities", "links", "history")} == {
        k: report[k] for k in ("memories", "entities", "links", "history")
    }
    assert state("--collection", "copy") == state()
    first = state()["memories"][-1]["id"]
    assert data("--collection", "copy", "history", first) == data("history", first)
    out = run("export", str(tmp_path / "again.jsonl.gz")).stdout
    assert out.startswith("Exported 2 memories") and "again.jsonl.gz" in out


def test_import_of_an_export_refuses_scope_options_and_taken_ids(tmp_path: Path):
    seed()
    run("export", str(tmp_path / "store.jsonl"))
    result = run(
        "--collection", "copy", "import", str(tmp_path / "store.jsonl"), "-u", "bob", code=2
    )
    assert "keeps every memory's own scope" in " ".join(result.stderr.replace("│", " ").split())
    result = run("import", str(tmp_path / "store.jsonl"), code=1)
    assert "already in the target store" in result.stderr
    assert len(data("list", "-u", "alice")["results"]) == 2


@pytest.mark.postgres
def test_doctor_and_transfer_on_postgres(
    tmp_path: Path, pg_dsn_18: str, monkeypatch: pytest.MonkeyPatch
):
    seed()
    run("export", str(tmp_path / "from-sqlite.jsonl"))
    monkeypatch.setenv("LINKMEM_PG_DSN", pg_dsn_18)
    pg = ("--store", "postgres", "--collection", "c_" + uuid.uuid4().hex[:10])
    run(*pg, "import", str(tmp_path / "from-sqlite.jsonl"))
    assert state(*pg)["memories"] == state()["memories"]

    report = data(*pg, "doctor")
    store = report["status"]["store"]
    assert report["ok"] is True and store["backend"] == "postgres"
    assert store["server_version"].startswith("18.") and store["pgvector_version"] >= "0.8"
    assert set(store["hnsw_indexes"].values()) == {"valid"} and store["memories"] == 2
    assert "password" not in store["location"]
    out = run(*pg, "doctor").stdout
    for label in ("server version", "pgvector version", "hnsw indexes", "valid", "memories 2"):
        assert label in out
