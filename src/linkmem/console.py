"""The ``linkmem`` console script, and how the command line finds a command's name without
importing itself (``command_name``). Nothing else is imported here: this module runs before
everything.
"""

from __future__ import annotations

import gc
import sys

#: The global options that take a value (``linkmem.cli.app.main_options``; a test keeps the
#: two equal): the command's name is the first argument that is neither these nor their value.
OPTIONS_WITH_A_VALUE = frozenset(
    {"--db", "--store", "--config", "--collection", "--url", "--api-key"}
)


def main() -> None:
    """Console-script entry point (``linkmem``)."""
    # The CLI's imports allocate ~70,000 objects that live as long as the process: collecting
    # them is wasted work, during the imports and in every full collection after them
    # (frozen: never examined). A cold `linkmem search` ~2% less CPU (~7 ms; 30 alternating
    # pairs each way, 0.978 / 1.018, load 4.6-5).
    gc.disable()
    try:
        from linkmem.cli.app import run
    finally:
        gc.freeze()
        gc.enable()
    run(sys.argv[1:])


def command_name(args: list[str]) -> str | None:
    """The first argument that is neither a global option nor an option's value."""
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            return next(rest, None)
        if not arg.startswith("-"):
            return arg
        if arg in OPTIONS_WITH_A_VALUE:
            next(rest, None)
    return None
