"""``python -m linkmem``: the same as the ``linkmem`` command."""

from linkmem.console import main

main()
