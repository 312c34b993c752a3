"""``linkmem import`` as a new user meets it: gzipped files, broken files, Ctrl-C, re-runs."""

from __future__ import annotations

import gzip
import json
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import data, run, start

from linkmem import Memory
from linkmem.ingest import import_file


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def texts(*scope: str) -> Counter[str]:
    rows = data("list", *(scope or ("-u", "alice")), "--limit", "10000")["results"]
    return Counter(m["memory"] for m in rows)


# gzip ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["chat.jsonl.gz", "chat.jsonl", "chat.data"])
def test_gzipped_jsonl_is_recognised_by_its_bytes(tmp_path: Path, name: str):
    path = tmp_path / name
    path.write_bytes(gzip.compress(jsonl([{"text": "Max is a dog"}, {"text": "Emma is here"}])))
    assert data("import", str(path), "-u", "alice")["memories"] == 2
    assert texts() == Counter({"Max is a dog": 1, "Emma is here": 1})


def test_gzipped_conversation_json(tmp_path: Path):
    path = tmp_path / "chat.json.gz"
    messages = [{"role": "user", "content": "I play the cello"}]
    path.write_bytes(gzip.compress(json.dumps(messages, indent=2).encode()))
    assert data("import", str(path), "-r", "s1")["memories"] == 1


def test_truncated_gzipped_jsonl_says_so_and_writes_nothing(tmp_path: Path):
    whole = gzip.compress(jsonl([{"text": f"note {i} " + "x" * 50} for i in range(200)]))
    path = tmp_path / "notes.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    result = run("import", str(path), "-u", "alice", code=1)
    assert "truncated or corrupt" in result.stderr and "nothing was written" in result.stderr
    assert texts() == Counter()


def test_truncated_export_says_so_and_writes_nothing(tmp_path: Path):
    for i in range(30):
        run("add", f"Max fact number {i}", "-u", "alice")
    run("export", str(tmp_path / "all.jsonl.gz"))
    whole = (tmp_path / "all.jsonl.gz").read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[:-40])
    result = run("--collection", "copy", "import", str(tmp_path / "cut.jsonl.gz"), code=1)
    err = result.stderr
    assert err.startswith("Error: ") and "Aborted" not in err
    assert "nothing was written" in err and ("truncated" in err or "ended before" in err)
    assert texts() and data("--collection", "copy", "list", "-u", "alice")["results"] == []


# --skip-existing ------------------------------------------------------------------------------
def test_skip_existing_makes_a_repeated_import_idempotent(tmp_path: Path):
    rows = [
        {"text": "Max is a dog"},
        {"text": "  Max is a dog  "},  # the same text once stripped
        {"text": "Emma lives in Lisbon"},
        {"text": "Max is a dog", "user_id": "bob"},  # another scope
        {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]},
    ]
    path = tmp_path / "m.jsonl"
    path.write_bytes(jsonl(rows))
    run("add", "Emma lives in Lisbon", "-u", "alice")  # stored before, not by an import
    first = data("import", str(path), "-u", "alice", "--skip-existing")
    assert (first["memories"], first["skipped"]) == (4, 2)
    assert texts() == Counter({"Max is a dog": 1, "Emma lives in Lisbon": 1, "Hi": 1, "Yo": 1})
    assert texts("-u", "bob") == Counter({"Max is a dog": 1})
    again = data("import", str(path), "-u", "alice", "--skip-existing")
    assert (again["memories"], again["skipped"]) == (0, 6)
    assert "Skipped 6 texts" in run("import", str(path), "-u", "alice", "--skip-existing").stdout
    assert sum(texts().values()) == 4


def test_skip_existing_keeps_the_new_part_of_a_conversation(tmp_path: Path):
    run("add", "Hi", "-u", "alice")
    path = tmp_path / "m.jsonl"
    path.write_bytes(
        jsonl(
            [{"messages": [{"role": "user", "content": "Hi"}, {"role": "user", "content": "New"}]}]
        )
    )
    assert data("import", str(path), "-u", "alice", "--skip-existing")["memories"] == 1
    assert texts() == Counter({"Hi": 1, "New": 1})


def test_skip_existing_does_not_apply_to_an_export(tmp_path: Path):
    run("add", "one", "-u", "alice")
    run("export", str(tmp_path / "all.jsonl"))
    result = run(
        "--collection", "c2", "import", str(tmp_path / "all.jsonl"), "--skip-existing", code=2
    )
    assert "--skip-existing" in result.stderr


def test_the_import_lives_in_the_core(tmp_path: Path, cli_env: Path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(jsonl([{"text": "from the core"}]))
    with Memory(cli_env / "core.db") as memory:
        assert import_file(memory, path, {"user_id": "alice"})["memories"] == 1
        report = import_file(memory, path, {"user_id": "alice"}, skip_existing=True)
        assert (report["memories"], report["skipped"]) == (0, 1)


# Ctrl-C --------------------------------------------------------------------------------------
def stored(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    except sqlite3.Error:
        return 0  # not created yet


def test_ctrl_c_says_what_was_kept_and_skip_existing_resumes(tmp_path: Path, cli_env: Path):
    n = 3000
    path = tmp_path / "big.jsonl"
    path.write_bytes(jsonl([{"text": f"Note {i} about Max in Lisbon"} for i in range(n)]))
    process = start("import", str(path), "-u", "alice", "--batch-size", "20")
    deadline = time.monotonic() + 120
    while stored(cli_env / "memory.db") < 100 and process.poll() is None:
        assert time.monotonic() < deadline, "the import wrote nothing"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, (out, err)
    kept = stored(cli_env / "memory.db")
    assert 0 < kept < n
    assert err.startswith("Error: import interrupted") and len(err.splitlines()) == 1, err
    assert f"{kept} memories" in err and "--skip-existing" in err and "Traceback" not in err
    report = data("import", str(path), "-u", "alice", "--skip-existing", "--batch-size", "500")
    assert (report["memories"], report["skipped"]) == (n - kept, kept)
    counts = texts()
    assert len(counts) == n and set(counts.values()) == {1}
