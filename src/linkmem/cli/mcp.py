"""``linkmem mcp``: this machine's memory as an MCP server over stdio (``linkmem.mcp_server``)."""

from __future__ import annotations

import json
import logging
import os
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from linkmem.cli.app import GlobalOptions, app, global_options, open_local_memory
from linkmem.config import ENV_VARS, resolve_settings
from linkmem.mcp_server.clients import CLIENTS, client_config

if TYPE_CHECKING:  # imported by the command itself (it brings getpass): others start faster
    from linkmem.mcp_server.scope import BoundScope

McpClient = Enum("McpClient", {name: name for name in CLIENTS}, type=str)
_SECRET = ("API_KEY", "DSN")  # environment variables never printed into a config


def _server_args(opts: GlobalOptions, scope: BoundScope) -> list[str]:
    """``linkmem`` arguments that open the same store, bound to the same scope."""
    args: list[str] = []
    for flag, path in (("--db", opts.db), ("--config", opts.config)):
        if path is not None:
            args += [flag, str(Path(path).absolute())]
    for flag, value in (("--store", opts.store), ("--collection", opts.collection)):
        if value is not None:
            args += [flag, value]
    args.append("mcp")
    flags = {"user_id": "--user", "agent_id": "--agent", "run_id": "--run"}
    for key, value in scope.ids().items():
        args += [flags[key], value]
    return args


def _server_env() -> dict[str, str]:
    """The linkmem settings of this shell's environment, for a client that starts the
    server without it; secrets are left for the user to add."""
    names = ["LINKMEM_HOME", *ENV_VARS]
    env = {n: os.environ[n] for n in names if os.environ.get(n) and not n.endswith(_SECRET)}
    for name in names:
        if os.environ.get(name) and name.endswith(_SECRET):
            typer.echo(f"linkmem: {name} is set here; add it to the env block yourself", err=True)
    return env


def _bound_scope(
    opts: GlobalOptions, user: str | None, agent: str | None, run: str | None
) -> BoundScope:
    """Flags (or their environment variables) first, then the config file's ``[mcp]``."""
    from linkmem.mcp_server.scope import BoundScope

    if user is None and agent is None and run is None:
        configured = resolve_settings(opts.overrides(), config_file=opts.config).mcp
        user, agent, run = configured.user_id, configured.agent_id, configured.run_id
    return BoundScope.of(user, agent, run)


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            envvar="LINKMEM_MCP_USER",
            help="User id the tools are bound to (default: your login name).",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", envvar="LINKMEM_MCP_AGENT", help="Agent id to bind to."),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", "-r", envvar="LINKMEM_MCP_RUN", help="Run id to bind to."),
    ] = None,
    print_config: Annotated[
        McpClient | None,
        typer.Option(
            "--print-config",
            help="Print the JSON that registers this server with a client, and exit: "
            + "; ".join(f"{name}: {files}" for name, files in CLIENTS.items())
            + ".",
        ),
    ] = None,
) -> None:
    """Serve this memory to an MCP client over stdio.

    For Claude, Cursor, VS Code and other MCP clients. The tools are bound to one scope
    (--user, --agent, --run): a model can narrow it, never widen it. To register the
    server, add the output of `linkmem mcp --print-config claude` to the client's config.
    """
    scope = _bound_scope(global_options(ctx), user, agent, run)
    if print_config is not None:
        args = _server_args(global_options(ctx), scope)
        typer.echo(json.dumps(client_config(print_config.value, args, _server_env()), indent=2))
        return
    from linkmem.mcp_server.stdio import serve_stdio  # the SDK loads only for this command

    logging.basicConfig(level=logging.WARNING, format="linkmem mcp: %(message)s")  # stderr
    memory = open_local_memory(ctx)
    where = ", ".join(f"{k}={v}" for k, v in scope.ids().items())
    typer.echo(f"linkmem mcp: serving {where} over stdio", err=True)
    serve_stdio(memory, scope)
