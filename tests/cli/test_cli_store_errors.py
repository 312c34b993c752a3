"""A store path the SQLite file cannot live at is one line on stderr and exit 1, no traceback."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import data, run, run_process, unprivileged


@pytest.fixture
def shared_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder every user can reach and write (tmp_path is root's own when run as root),
    used as LINKMEM_HOME so a CLI run as ``nobody`` can read its settings."""
    path = Path(tempfile.mkdtemp(prefix="linkmem-cli-"))
    path.chmod(0o777)
    monkeypatch.setenv("LINKMEM_HOME", str(path))
    yield path
    for folder, _, _ in os.walk(path):
        Path(folder).chmod(0o755)
    shutil.rmtree(path)


def one_error_line(stderr: str) -> str:
    assert stderr.startswith("Error: ") and "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    return stderr


def test_read_only_store_file(shared_dir: Path):
    db = shared_dir / "memory.db"
    run("--db", str(db), "add", "kept", "-u", "alice")
    db.chmod(0o444)
    result = run_process(
        "--db", str(db), "add", "more", "-u", "alice", code=1, prefix=unprivileged()
    )
    message = one_error_line(result.stderr)
    assert "read-only" in message and "chmod" in message and str(db) in message
    db.chmod(0o644)
    assert [m["memory"] for m in data("--db", str(db), "list", "-u", "alice")["results"]] == [
        "kept"
    ]


def test_read_only_folder(shared_dir: Path):
    folder = shared_dir / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    for target in (folder / "memory.db", folder / "sub" / "memory.db"):
        result = run_process("--db", str(target), "list", "-u", "a", code=1, prefix=unprivileged())
        assert "folder" in one_error_line(result.stderr)
    assert list(folder.iterdir()) == []


def test_a_file_that_is_not_a_database(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_text("shopping list: eggs, milk, a very long line of text " * 20)
    result = run("--db", str(path), "list", "-u", "alice", code=1)
    message = one_error_line(result.stderr)
    assert "not a SQLite database" in message and "pass the path" in message
    assert path.read_text().startswith("shopping list")


def test_a_store_path_under_a_regular_file(tmp_path: Path):
    (tmp_path / "plain").write_text("x")
    result = run(
        "--db", str(tmp_path / "plain" / "deeper" / "memory.db"), "list", "-u", "a", code=1
    )
    assert "plain is a file, not a folder" in one_error_line(result.stderr)


def test_the_store_path_from_the_environment_is_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LINKMEM_DB", str(tmp_path))  # a folder, not a file
    result = run("list", "-u", "alice", code=1)
    assert "is a folder, not a SQLite file" in one_error_line(result.stderr)
