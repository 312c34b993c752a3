"""Run the CLI in-process and check its exit code, or as a real process when the terminal,
signals or file permissions matter."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from linkmem.cli import app

runner = CliRunner()
LINKMEM = Path(sys.executable).with_name("linkmem")  # the console script of this venv
NOBODY = 65534


def run(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def data(*args: str, code: int = 0) -> Any:
    """Run a command with --json and parse its stdout."""
    return json.loads(run(*args, "--json", code=code).stdout)


def unprivileged() -> list[str]:
    """A command prefix under which file permissions apply: root ignores them, so a test run
    as root runs the CLI as ``nobody`` (the files it uses must be reachable by all)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be tested")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def start(
    *args: str, prefix: list[str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[str]:
    """``linkmem ARGS`` as a child process (environment inherited) with Ctrl-C enabled."""
    return subprocess.Popen(
        [*(prefix or []), str(LINKMEM), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell without job control starts background jobs ignoring SIGINT; undo that.
        preexec_fn=_default_sigint,
    )


def run_process(
    *args: str, code: int = 0, prefix: list[str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    process = start(*args, prefix=prefix, cwd=cwd)
    out, err = process.communicate(timeout=300)
    assert process.returncode == code, (process.returncode, out, err)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def command_paths() -> list[tuple[str, ...]]:
    """Every command of the CLI as its path of names (``()`` is ``linkmem`` itself)."""
    import typer

    from linkmem.cli import app

    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found
