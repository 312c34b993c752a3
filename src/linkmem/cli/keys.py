"""``linkmem keys ...``: create, list and revoke the API keys a linkmem server checks."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from linkmem.cli import render
from linkmem.cli.app import app, open_memory
from linkmem.cli.options import Json
from linkmem.keys import ROLES

keys_app = typer.Typer(
    help="Create, list and revoke the API keys a linkmem server accepts.",
    no_args_is_help=True,
)
app.add_typer(keys_app, name="keys")

Role = Enum("Role", {name: name for name in ROLES}, type=str)  # the library's roles


@keys_app.command("create")
def create_key(
    ctx: typer.Context,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            "-t",
            help="Tenant the key is bound to: user:ID, agent:ID or user:ID,agent:ID "
            "(not for admin keys).",
        ),
    ] = None,
    role: Annotated[
        Role,
        typer.Option(help="read: search and read; write: also change; admin: every scope."),
    ] = Role.write,
    name: Annotated[
        str | None, typer.Option("--name", help="A label to recognise the key by.")
    ] = None,
    as_json: Json = False,
) -> None:
    """Create an API key and print its secret.

    The secret is shown only once: store it where the client can read it.
    """
    key, secret = open_memory(ctx).keys.create(tenant, role=role.value, name=name)
    render.emit({"key": key.to_dict(), "secret": secret}, as_json, _created)


@keys_app.command("list")
def list_keys(
    ctx: typer.Context,
    show_all: Annotated[bool, typer.Option("--all", help="Also list revoked keys.")] = False,
    as_json: Json = False,
) -> None:
    """List the API keys (never their secrets), oldest first."""
    keys = open_memory(ctx).keys.list(include_revoked=show_all)
    render.emit({"results": [k.to_dict() for k in keys]}, as_json, _table)


@keys_app.command("revoke")
def revoke_key(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key id (key_...), as `keys list` shows.")],
    as_json: Json = False,
) -> None:
    """Revoke an API key for good: requests that send it are refused."""
    key = open_memory(ctx).keys.revoke(key_id)
    render.emit({"key": key.to_dict()}, as_json, _revoked)


# rendering -------------------------------------------------------------------------------------
def _label(key: dict[str, Any]) -> str:
    parts = [key["role"], key["tenant"] or "every scope"]
    if key["name"]:
        parts.append(repr(key["name"]))
    return ", ".join(parts)


def _created(result: dict[str, Any]) -> None:
    key = result["key"]
    typer.echo(f"Created API key {key['id']} ({_label(key)}):")
    typer.echo("")
    typer.echo(f"    {result['secret']}")
    typer.echo("")
    typer.echo(
        "This secret is shown only now; linkmem keeps only its hash. Send it to a linkmem "
        "server as the header `Authorization: Bearer <secret>`, or set LINKMEM_API_KEY for "
        "the linkmem CLI."
    )


def _revoked(result: dict[str, Any]) -> None:
    key = result["key"]
    typer.echo(f"Revoked API key {key['id']} ({_label(key)}) at {key['revoked_at']}.")


def _table(result: dict[str, Any]) -> None:
    rows = result["results"]
    out = render.console()
    if not rows:
        out.print("[dim]No API keys. Create one with: linkmem keys create --tenant user:ID[/dim]")
        return
    revoked = any(r["revoked_at"] for r in rows)  # the column only when it says something
    chars = 16 if out.width >= 100 else 10  # times to the minute, or dates on narrow screens
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("name", min_width=6, overflow="fold")
    table.add_column("role", no_wrap=True)
    table.add_column("tenant", min_width=10, overflow="fold")
    table.add_column("prefix", style="dim", no_wrap=True)
    table.add_column("created", style="dim", no_wrap=True)
    if revoked:
        table.add_column("revoked", style="red", no_wrap=True)
    for r in rows:
        cells = [
            r["id"],
            Text(r["name"] or ""),
            r["role"],
            Text(r["tenant"] or "every scope"),
            r["prefix"],
            _when(r["created_at"], chars),
        ]
        if revoked:
            cells.append(_when(r["revoked_at"], chars))
        table.add_row(*cells)
    out.print(table)


def _when(stamp: str | None, chars: int) -> str:
    """``2025-01-31 09:30`` (UTC) or ``2025-01-31`` from an ISO timestamp; '' for None."""
    return (stamp or "")[:chars].replace("T", " ")
