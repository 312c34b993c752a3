"""The console script (``linkmem.console``): it finds the command without the CLI, and a
``linkmem search`` whose query entities come from the child process answers exactly as the
in-process command does."""

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


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--user", "search"],
        ["--url", "http://h", "search", "q"],
        ["--url=http://h", "search"],
    ],
)
def test_no_child_for_other_commands_or_a_server(args: list[str]) -> None:
    assert console.start_query_ner(args) is None


def test_search_through_the_child_equals_the_in_process_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINKMEM_EMBEDDER", "onnx")
    texts = ["Maria flew to Lisbon with Ken", "Ken fixed the road bike", "Lisbon was rainy"]
    for text in texts:
        data("add", text, "--user", "u")
    query = ["search", "what did Maria do in Lisbon", "--user", "u", "--explain", "--json"]
    in_process = data(*query[:-1])
    code = (
        "import sys\nfrom linkmem.console import main\ntry:\n    main()\nfinally:\n"
        "    print('extractor loaded here:', 'linkmem.extract.spacy' in sys.modules, "
        "file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *query], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == in_process
    assert "extractor loaded here: False" in out.stderr  # the child's answer was used
    assert any(hit["score_details"]["entity_boost"] > 0 for hit in in_process["results"])


def test_the_console_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, json; import linkmem.console, linkmem.extract.child; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert loaded & {"typer", "click", "numpy", "spacy", "onnxruntime", "rich", "pydantic"} == set()
