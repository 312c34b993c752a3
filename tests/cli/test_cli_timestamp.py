"""``linkmem add --timestamp``: the memory's created_at, and a clear error for a bad one."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import data, run


def test_add_with_a_timestamp(cli_env: Path):
    out = data("add", "Dyed my hair last week", "-u", "alice", "--timestamp", "2022-05-05")
    assert out["results"][0]["created_at"] == "2022-05-05T00:00:00+00:00"


def test_a_bad_timestamp_is_refused(cli_env: Path):
    result = run("add", "never stored", "-u", "alice", "--timestamp", "last week", code=1)
    assert "timestamp must be an ISO-8601" in result.stderr
    assert data("list", "-u", "alice")["results"] == []
