"""The console script (``linkmem.console``): it finds the command without the CLI, and a
``linkmem search`` neither imports nor loads spaCy, yet matches the query's stored entities."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_helpers import data

from linkmem import console
from linkmem.cli.app import _options_with_a_value


def test_options_with_a_value_match_the_cli() -> None:
    assert console.OPTIONS_WITH_A_VALUE == _options_with_a_value()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["search", "q"], "search"),
        (["--db", "search", "list"], "list"),
        (["--db=x.db", "search", "q"], "search"),
        (["--json", "--", "search"], "search"),
        (["--version"], None),
    ],
)
def test_command_name(args: list[str], expected: str | None) -> None:
    assert console.command_name(args) == expected


def test_a_search_never_imports_spacy_and_still_matches_entities(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINKMEM_EMBEDDER", "onnx")
    texts = ["Maria flew to Lisbon with Ken", "Ken fixed the road bike", "Lisbon was rainy"]
    for text in texts:
        data("add", text, "--user", "u")
    query = ["search", "what did maria do in lisbon", "--user", "u", "--explain", "--json"]
    in_process = data(*query[:-1])
    code = (
        "import sys\nfrom linkmem.console import main\ntry:\n    main()\nfinally:\n"
        "    print('spacy imported:', 'spacy' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *query], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == in_process
    assert "spacy imported: False" in out.stderr
    entities = {hit["score_details"]["entity"] for hit in in_process["results"]}
    assert {"Maria", "Lisbon"} & entities  # found by their keys, lower-case in the query


def test_the_console_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, json; import linkmem.console; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert loaded & {"typer", "click", "numpy", "spacy", "onnxruntime", "rich", "pydantic"} == set()
