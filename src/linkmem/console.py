"""The ``linkmem`` console script. Before it imports the command line (~0.3 s of imports that
hold the GIL), a ``search`` on this machine's store starts the child process that imports
spaCy and extracts the query's entities (``linkmem.extract.child``), so the two import on
two cores at once. Nothing else is imported here: this module runs before everything.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkmem.extract.child import ChildExtraction

#: The global options that take a value (``linkmem.cli.app.main_options``; a test keeps the
#: two equal): the command's name is the first argument that is neither these nor their value.
OPTIONS_WITH_A_VALUE = frozenset(
    {"--db", "--store", "--config", "--collection", "--url", "--api-key"}
)


def main() -> None:
    """Console-script entry point (``linkmem``)."""
    args = sys.argv[1:]
    child = start_query_ner(args)
    from linkmem.cli.app import run

    run(args, child)


def start_query_ner(args: list[str]) -> ChildExtraction | None:
    """The child for a ``linkmem search`` that opens a local store (None for any other
    command, with ``--url`` / ``LINKMEM_URL``, or when spaCy is imported already)."""
    if command_name(args) != "search" or "spacy" in sys.modules:
        return None
    if os.environ.get("LINKMEM_URL") or any(a.split("=")[0] == "--url" for a in args):
        return None
    from linkmem.extract.child import ChildExtraction

    return ChildExtraction()


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
