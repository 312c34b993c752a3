"""Option definitions shared by every command, and the parsing of JSON option values."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from linkmem.cli.app import fail

User = Annotated[str | None, typer.Option("--user", "-u", help="User id of the scope.")]
Agent = Annotated[str | None, typer.Option("--agent", "-a", help="Agent id of the scope.")]
Run = Annotated[str | None, typer.Option("--run", "-r", help="Run (session) id of the scope.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]
Filters = Annotated[
    str | None,
    typer.Option(
        "--filters",
        help='Metadata filter as JSON, e.g. \'{"topic": "pets"}\' or '
        '\'{"AND": [{"year": {"gte": 2024}}]}\'.',
    ),
]
Metadata = Annotated[
    str | None,
    typer.Option("--metadata", "-m", help='Metadata as a JSON object, e.g. \'{"topic": "pets"}\'.'),
]
Limit = Annotated[int, typer.Option("--limit", "-n", help="Maximum number of rows.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def scope(user: str | None, agent: str | None, run: str | None) -> dict[str, str | None]:
    """The scope keyword arguments every ``Memory`` call takes."""
    return {"user_id": user, "agent_id": agent, "run_id": run}


def parse_json(value: str | None, option: str) -> Any:
    """``None`` stays ``None``; text that is not JSON is a usage error (exit 2)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as e:
        raise typer.BadParameter(
            f"not valid JSON ({e.msg} at column {e.colno})", param_hint=option
        ) from e


def ensure_confirmable(yes: bool) -> None:
    """Refuse (exit 2) a destructive command without ``--yes`` when nobody can answer."""
    if not yes and not sys.stdin.isatty():
        fail("stdin is not a terminal, so nothing can be confirmed; pass --yes to go ahead", 2)


def confirm(yes: bool, question: str) -> None:
    """Go on when ``--yes`` was given; ask on a terminal (no: exit 1); refuse otherwise."""
    ensure_confirmable(yes)
    if not yes:
        typer.confirm(question, abort=True)
