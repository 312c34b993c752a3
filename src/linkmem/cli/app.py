"""The Typer app, its global options, and the one place where errors become exit codes."""

from __future__ import annotations

import copy
import gc
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from linkmem import __version__
from linkmem.components import load_models
from linkmem.console import command_name
from linkmem.errors import LinkmemError
from linkmem.memory import Memory

if TYPE_CHECKING:
    from linkmem.client.remote import RemoteMemory

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class LinkmemGroup(TyperGroup):
    """Every command runs below this group's ``invoke``: a ``LinkmemError`` raised anywhere
    becomes one line on stderr and exit code 1; Ctrl-C becomes one line (the interrupt's
    message, if a command gave it one) and exit code 130. Usage mistakes keep Typer's exit
    code 2."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LinkmemError as e:
            fail(str(e), 1)
        except KeyboardInterrupt as e:
            fail(str(e) or "interrupted", EXIT_INTERRUPTED)


def fail(message: str, code: int) -> NoReturn:
    """Print ``Error: message`` on stderr and exit with ``code`` (never 0)."""
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


app = typer.Typer(
    name="linkmem",
    cls=LinkmemGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold API keys
    # Plain help: wraps cleanly at 80 columns, no "<bool>" after flags, no boxes.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"linkmem {__version__}")
        raise typer.Exit()


@dataclass(frozen=True)
class GlobalOptions:
    """Settings given on the command line; the highest layer of ``resolve_settings``."""

    db: Path | None = None
    store: str | None = None
    config: Path | None = None
    collection: str | None = None
    url: str | None = None
    api_key: str | None = None

    def overrides(self) -> dict[str, Any]:
        values = {"store": self.store, "collection": self.collection}
        return {k: v for k, v in values.items() if v is not None}


@app.callback()
def main_options(
    ctx: typer.Context,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="SQLite file to use (default: $LINKMEM_HOME/memory.db).", dir_okay=False
        ),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", help="Store backend: sqlite, postgres, ...")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Config file (default: $LINKMEM_HOME/config.toml).", dir_okay=False
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option("--collection", help="Collection (table prefix) to use.")
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            envvar="LINKMEM_URL",
            help="Talk to a running `linkmem serve` at this URL instead of opening a store.",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="LINKMEM_API_KEY",
            help="API key for --url (better: set LINKMEM_API_KEY).",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """linkmem: long-term memory for AI agents, with entity linking. Offline by default.

    Try `linkmem demo` first.
    """
    ctx.obj = GlobalOptions(db, store, config, collection, url, api_key)


def global_options(ctx: typer.Context) -> GlobalOptions:
    return ctx.find_object(GlobalOptions) or GlobalOptions()


def open_memory(
    ctx: typer.Context, *, embeds: bool = False, extracts: bool = True
) -> Memory | RemoteMemory:
    """The ``Memory`` the global options describe (a ``RemoteMemory`` with ``--url``),
    closed when the command ends. ``embeds``: the command will run the embedder and, when
    ``extracts``, the entity extractor (a search does not), so they are loaded now, side by
    side (see ``components.load_models``)."""
    opts = global_options(ctx)
    if opts.url:
        from linkmem.client.remote import RemoteMemory  # httpx only for --url

        return ctx.with_resource(RemoteMemory(opts.url, api_key=opts.api_key))
    memory = open_local_memory(ctx)
    if embeds:
        load_models(memory.embedder, memory.extractor if extracts else None)
    return memory


def open_local_memory(ctx: typer.Context) -> Memory:
    """The store on this machine, for commands that cannot run through a server."""
    opts = global_options(ctx)
    if opts.url:
        fail(
            f"`linkmem {ctx.command.name}` works on this machine's store, not through a "
            "server: drop --url (and unset LINKMEM_URL)",
            2,
        )
    memory = Memory(opts.db, config_file=opts.config, **opts.overrides())
    return ctx.with_resource(memory)


def main() -> None:
    """The command line (as ``linkmem.console`` runs it)."""
    run(sys.argv[1:])


def run(args: list[str]) -> None:
    """Run the command ``args`` name."""
    try:
        command_app(args)(args, prog_name="linkmem")
    finally:
        # The command is done and its resources closed; the process ends now. Frozen objects
        # are skipped by the collections of interpreter shutdown, which otherwise walk every
        # object spaCy and the models made: 0.38 -> 0.04 s of exit after `import spacy`.
        gc.freeze()


def command_app(args: list[str]) -> typer.Typer:
    """``app`` holding only the command ``args`` run: Click builds the options of every
    command it holds before it parses any (~35 ms of CPU for the ones not run); none for
    ``--version``. The whole ``app`` when no command is named (help), for an unknown name
    (Click then suggests one) and for shell completion."""
    name = command_name(args)
    if "_LINKMEM_COMPLETE" in os.environ:
        return app
    if name is None:
        return _without_commands() if {"--version", "-V"} & set(args) else app
    commands = [c for c in app.registered_commands if _registered_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return only


def _registered_name(command: Any) -> str:
    from typer.main import get_command_name

    return command.name or get_command_name(command.callback.__name__)


def _options_with_a_value() -> set[str]:
    """The global options that take a value, read from the Typer app (``linkmem.console``
    keeps a copy that a test compares with this)."""
    from typer.main import get_command

    group = get_command(_without_commands())
    return {
        opt
        for param in group.params
        if not getattr(param, "is_flag", False) and getattr(param, "nargs", 1) == 1
        for opt in [*param.opts, *param.secondary_opts]
        if opt.startswith("-")
    }


def _without_commands() -> typer.Typer:
    bare = copy.copy(app)
    bare.registered_commands, bare.registered_groups = [], []
    return bare
