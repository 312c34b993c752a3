"""Run the CLI in-process and check its exit code."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from linkmem.cli import app

runner = CliRunner()


def run(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def data(*args: str) -> Any:
    """Run a command with --json and parse its stdout."""
    return json.loads(run(*args, "--json").stdout)
