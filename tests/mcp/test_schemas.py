"""What the tools cost a model: valid JSON Schema, an example in every description that the
schema accepts, and a size budget (clients send all of it with every turn)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from linkmem.mcp_server.descriptions import INSTRUCTIONS, TOOLS
from linkmem.mcp_server.schema import compact_schema
from linkmem.mcp_server.server import build_server

#: Characters of the whole tools/list answer (about 4 characters a token: ~1,800 tokens).
TOOLS_BUDGET = 7_200
DESCRIPTION_BUDGET = 400
INSTRUCTIONS_BUDGET = 600


def _listed() -> list[dict[str, Any]]:
    server = build_server(lambda ctx, role: None)
    tools = anyio.run(server.list_tools)
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


LISTED = _listed()


def _example(description: str) -> dict[str, Any]:
    return json.loads(re.search(r"Example: (\{.*\})$", description).group(1))


@pytest.mark.parametrize("tool", LISTED, ids=lambda t: t["name"])
def test_input_schemas_are_valid_json_schema(tool: dict[str, Any]):
    schema = tool["inputSchema"]
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and "title" not in json.dumps(schema)
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{tool['name']}.{name} has no description"


@pytest.mark.parametrize("tool", LISTED, ids=lambda t: t["name"])
def test_each_description_has_an_example_its_schema_accepts(tool: dict[str, Any]):
    description = tool["description"]
    assert len(description) <= DESCRIPTION_BUDGET
    Draft202012Validator(tool["inputSchema"]).validate(_example(description))


def test_the_tools_stay_under_the_size_budget():
    size = len(json.dumps(LISTED))
    assert size <= TOOLS_BUDGET, f"tools/list is {size} characters; the budget is {TOOLS_BUDGET}"
    assert len(INSTRUCTIONS) <= INSTRUCTIONS_BUDGET
    assert [t["name"] for t in LISTED] == list(TOOLS)


def test_only_the_write_tools_are_not_read_only():
    writes = {t["name"] for t in LISTED if not t["annotations"]["readOnlyHint"]}
    assert writes == {"add_memory", "update_memory", "delete_memory"}


def test_compact_schema_drops_titles_and_null_alternatives_only():
    schema = {
        "title": "args",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "k": {"type": "integer", "default": 5},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "n": {"type": "integer"},
            "k": {"type": "integer", "default": 5},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    }
