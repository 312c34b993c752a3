"""A cold ``linkmem search`` loads what a search needs and nothing else: the embedder's runtime
from the cached optimised graph (no graph rewrite, so no protobuf), and no spaCy, web server,
MCP SDK or HTTP client."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_helpers import data

UNNEEDED = {"spacy", "thinc", "fastapi", "starlette", "uvicorn", "mcp", "httpx", "google"}


def test_a_cold_search_reads_the_cached_model_and_imports_no_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINKMEM_EMBEDDER", "onnx")
    data("add", "Maria flew to Lisbon with Ken", "--user", "u")  # and caches the model
    code = (
        "import json, sys\nfrom linkmem.console import main\ntry:\n    main()\nfinally:\n"
        "    print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)"
    )
    argv = [sys.executable, "-c", code, "search", "lisbon", "--user", "u", "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["results"][0]["memory"] == "Maria flew to Lisbon with Ken"
    loaded = set(json.loads(out.stderr.splitlines()[-1]))
    assert {"onnxruntime", "tokenizers", "typer"} <= loaded
    assert loaded & UNNEEDED == set()
