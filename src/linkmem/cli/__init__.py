"""The ``linkmem`` command line: a thin shell over :class:`linkmem.Memory`.

Importing the command modules registers their commands on ``app``.
"""

from __future__ import annotations

from linkmem.cli import (  # noqa: F401 (registration)
    commands,
    demo,
    doctor,
    entities,
    exports,
    imports,
    keys,
    mcp,
    serve,
)
from linkmem.cli.app import app, main

try:  # the eval sub-app lives with the evaluation code and may not be installed
    from linkmem.eval.cli import app as eval_app
except ImportError:
    eval_app = None
else:
    app.add_typer(eval_app, name="eval")

__all__ = ["app", "main"]
