"""The console script builds only the command it runs (``linkmem.cli.app.command_app``), and
that command behaves as it does in the whole app."""

from __future__ import annotations

import json

import pytest
from cli_helpers import run_process

from linkmem.cli import app
from linkmem.cli.app import command_app


def names(typer_app) -> set[str]:
    from linkmem.cli.app import _registered_name

    return {_registered_name(c) for c in typer_app.registered_commands} | {
        g.name for g in typer_app.registered_groups
    }


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["search", "q"], {"search"}),
        (["--db", "x.db", "--store", "sqlite", "search", "q", "--user", "u"], {"search"}),
        (["--db=x.db", "list"], {"list"}),
        (["--url", "http://h", "delete-all"], {"delete-all"}),
        (["entities", "list"], {"entities"}),
        (["eval", "locomo"], {"eval"}),
        (["--", "add", "t"], {"add"}),
        (["--version"], set()),
    ],
)
def test_only_the_named_command_is_built(args: list[str], expected: set[str]) -> None:
    assert names(command_app(args)) == expected


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"], ["serch"], ["--db", "search"]])
def test_everything_else_gets_the_whole_app(args: list[str]) -> None:
    assert command_app(args) is app


def test_shell_completion_gets_the_whole_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_LINKMEM_COMPLETE", "bash_complete")
    assert command_app(["search", "q"]) is app


def test_every_command_can_be_reached() -> None:
    for name in names(app):
        assert names(command_app([name])) == {name}


def test_console_script_runs_commands_help_and_typos() -> None:
    added = run_process("add", "Maria flew to Lisbon", "--user", "u", "--json")
    assert json.loads(added.stdout)["results"]
    found = json.loads(run_process("search", "Lisbon", "--user", "u", "--json").stdout)
    assert found["results"][0]["memory"] == "Maria flew to Lisbon"
    assert "linkmem" in run_process("--version").stdout
    assert "search" in run_process("--help").stdout
    typo = run_process("serch", code=2)
    assert "Did you mean 'search'" in typo.stderr
