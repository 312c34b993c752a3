"""The CLI as a new user meets it: --version, help at 80 columns, options that fit each call,
``linkmem check``, and the way to run ``linkmem`` from the README's venv."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import LINKMEM, command_paths, data, run, run_process, runner

import linkmem
from linkmem.cli import app
from linkmem.cli.demo import next_steps
from linkmem.memory import Memory

README = Path(__file__).resolve().parents[2] / "README.md"


def test_version():
    assert run("--version").stdout == f"linkmem {linkmem.__version__}\n"
    assert run("-V").stdout == run("--version").stdout


# help ----------------------------------------------------------------------------------------
def help_at_80(*path: str) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "linkmem")
def test_help_is_plain_text_that_fits_80_columns(path: tuple[str, ...]):
    text = help_at_80(*path)
    assert "<bool>" not in text  # flags take no value
    assert not re.search(r"[│╭╰─]", text), "no boxes: they squeeze the help into a column"
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "[bold]" not in text  # no rich markup shown literally


def test_command_summaries_are_whole_sentences():
    commands = help_at_80().split("Commands:")[1]
    ours = [line for line in commands.splitlines() if line.strip() and "eval" not in line]
    assert ours and not [line for line in ours if line.endswith("...")]


def test_flags_have_one_spelling():
    text = help_at_80("search")
    assert "--explain " in text and "--no-explain" not in text


# options -------------------------------------------------------------------------------------
def test_history_takes_a_scope():
    memory = data("add", "Max is a dog", "-u", "alice")["results"][0]
    events = data("history", memory["id"], "-u", "alice")["results"]
    assert [e["event"] for e in events] == ["ADD"]
    result = run("history", memory["id"], "-u", "bob", code=1)
    assert "in this scope" in result.stderr


def test_negative_offset_is_refused():
    result = run("list", "-u", "alice", "--offset", "-1", code=2)
    assert "--offset" in result.stderr
    assert re.search(r"x ?>= ?0|greater than or equal to 0", result.stderr)  # typer's wording
    data("add", "one", "-u", "alice")
    data("add", "two", "-u", "alice")
    page = data("list", "-u", "alice", "--offset", "1")["results"]
    assert [m["memory"] for m in page] == ["one"]


def test_empty_search_asks_for_a_query():
    result = run("search", "  ", "-u", "alice", code=1)
    assert "query" in result.stderr and "remember" not in result.stderr


# check ---------------------------------------------------------------------------------------
def test_check_finds_and_repairs_a_broken_store(cli_env: Path):
    first = data("add", "Max runs far", "-u", "alice")["results"][0]
    assert run("check").stdout == "store is consistent\n"
    with Memory(cli_env / "memory.db") as memory:  # break one memory's BM25 postings
        memory.store.update_memory(memory.store.get_memories([first["id"]])[0], None, ["bogus"])
    lines = run("check", code=1).stdout.splitlines()
    assert lines[0].startswith("wrong_postings: 1 ") and "--repair" in lines[-1]
    assert data("check", code=1)["ok"] is False
    assert run("check", "--repair").stdout == "Repaired: store is consistent\n"
    report = data("check")
    assert report["ok"] is True and report["problems"] == [] and report["memories"] == 1


def test_check_says_what_a_repair_could_not_fix(monkeypatch: pytest.MonkeyPatch):
    left = [{"kind": "history_gap", "count": 1, "detail": "memories whose history is off"}]

    def fake_check(self: Memory, *, repair: bool = False) -> dict[str, Any]:
        return {"ok": False, "problems": left, "repaired": repair}

    monkeypatch.setattr(Memory, "check", fake_check)
    lines = run("check", "--repair", code=1).stdout.splitlines()
    assert lines[0] == "history_gap: 1 memories whose history is off"
    assert "cannot be rebuilt" in lines[1] and len(lines) == 2


# running linkmem from the README's venv -------------------------------------------------------
def test_next_steps_name_the_program_the_way_this_shell_runs_it(tmp_path: Path):
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "activate").write_text("")
    program = str(venv_bin / "linkmem")
    assert "Next: [bold]linkmem add" in next_steps(program, program)  # on PATH
    line = next_steps(program, None)
    assert f"{program} add" in line and f". {venv_bin / 'activate'}" in line


def test_demo_run_from_the_venv_says_how_to_run_linkmem(monkeypatch: pytest.MonkeyPatch):
    dirs = os.environ["PATH"].split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in dirs if Path(d) != LINKMEM.parent))
    out = run_process("demo").stdout
    assert f"{LINKMEM} add" in out and f". {LINKMEM.with_name('activate')}" in out


def test_readme_says_how_to_run_the_cli():
    cli = README.read_text().split("## CLI", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/linkmem" in cli or ". .venv/bin/activate" in cli
