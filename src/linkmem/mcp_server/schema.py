"""Input schemas as small as they can be and still say everything: clients send them to the
model with every turn.

Pydantic's schema of a signature carries a ``title`` on every property and spells an optional
argument ``anyOf: [X, {"type": "null"}]`` with ``default: null``. An argument that is not
``required`` is already optional, so both go; what stays is types, enums, defaults that are
not null, and the descriptions.
"""

from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}


def compact_schema(schema: Any) -> Any:
    """``schema`` without titles, null alternatives and null defaults (a new object)."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            out[key] = {name: compact_schema(prop) for name, prop in value.items()}
            continue
        out[key] = compact_schema(value)
    options = out.get("anyOf")
    if isinstance(options, list) and _NULL in options and len(options) == 2:
        del out["anyOf"]
        out = {**next(o for o in options if o != _NULL), **out}
    return out
