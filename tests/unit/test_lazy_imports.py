"""Importing linkmem stays cheap: heavy dependencies load only when a call needs them.

Each check runs in a fresh interpreter, since this test process has imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import linkmem

HEAVY = ("httpx", "fastapi", "starlette", "uvicorn", "mcp", "onnxruntime", "spacy", "thinc")


def modules_loaded_by(code: str) -> set[str]:
    """The top-level package names in ``sys.modules`` after ``code`` runs in a new process."""
    report = "import json, sys; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    probe = f"{code}\n{report}"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import linkmem",
        "from linkmem import Memory",
        "import linkmem.cli",
    ],
)
def test_import_does_not_load_heavy_modules(code: str) -> None:
    assert modules_loaded_by(code) & set(HEAVY) == set()


def test_remote_client_does_not_load_the_models() -> None:
    loaded = modules_loaded_by("from linkmem import RemoteMemory")
    assert "httpx" in loaded
    assert loaded & {"onnxruntime", "spacy", "fastapi", "mcp"} == set()


def test_every_public_name_resolves() -> None:
    from linkmem.client.aio import AsyncMemory
    from linkmem.client.remote import RemoteMemory
    from linkmem.memory import Memory

    assert linkmem.Memory is Memory
    assert linkmem.RemoteMemory is RemoteMemory
    assert linkmem.AsyncMemory is AsyncMemory
    for name in linkmem.__all__:
        assert getattr(linkmem, name) is not None
    assert set(linkmem.__all__) <= set(dir(linkmem))


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = linkmem.no_such_name
    with pytest.raises(ImportError):
        from linkmem import no_such_name  # noqa: F401


def test_entity_extraction_does_not_import_the_spacy_command_line() -> None:
    pytest.importorskip("spacy")
    code = (
        "from linkmem.components import LazyExtractor\n"
        "from linkmem.config import resolve_settings\n"
        "extractor = LazyExtractor(resolve_settings(env={}))\n"
        "assert extractor.extract_batch(['Alice flew to Paris.'])[0]\n"
    )
    loaded = modules_loaded_by(code)
    assert "spacy" in loaded
    assert loaded & {"weasel", "requests", "httpx", "jinja2"} == set()


def test_spacy_command_line_still_works_afterwards() -> None:
    pytest.importorskip("spacy")
    code = (
        "import sys\n"
        "from linkmem.extract.pipeline import import_spacy\n"
        "spacy = import_spacy()\n"
        "assert 'spacy.cli' not in sys.modules and 'spacy.cli.info' not in sys.modules\n"
        "assert spacy.info()['spacy_version'] == spacy.__version__\n"
        "import spacy.cli\n"
        "assert spacy.cli.info.__module__ == 'spacy.cli.info'\n"
    )
    assert "weasel" in modules_loaded_by(code)  # the real CLI, imported on demand
