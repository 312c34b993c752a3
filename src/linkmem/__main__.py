"""``python -m linkmem``: the same as the ``linkmem`` command."""

from linkmem.cli import main

main()
