"""The JSON that registers ``linkmem mcp`` with a client: ``linkmem mcp --print-config``.

The command is an absolute path into the environment linkmem is installed in (the
``linkmem`` script beside the running interpreter, else that interpreter with
``-m linkmem``), so the client starts this install whatever its own ``PATH`` is.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

#: Clients and the config file each reads (shown in ``--help``).
CLIENTS = {
    "claude": "Claude Desktop (claude_desktop_config.json) or Claude Code (.mcp.json)",
    "cursor": "Cursor (~/.cursor/mcp.json or .cursor/mcp.json)",
    "vscode": "VS Code (.vscode/mcp.json)",
}
NAME = "linkmem"


def launch_command() -> list[str]:
    """The absolute command that runs ``linkmem`` from this environment."""
    python = Path(sys.executable).absolute()  # not resolved: a venv's python is a symlink
    script = shutil.which(NAME, path=str(python.parent))
    return [str(Path(script).absolute())] if script else [str(python), "-m", NAME]


def client_config(client: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The block registering a stdio server that runs ``linkmem <args>`` with ``env``."""
    command, *prefix = launch_command()
    server: dict[str, Any] = {"command": command, "args": [*prefix, *args]}
    if env:
        server["env"] = env
    if client == "vscode":
        return {"servers": {NAME: {"type": "stdio", **server}}}
    return {"mcpServers": {NAME: server}}
