"""SQL fragments for SQLite: scope and metadata-filter compilation."""

from __future__ import annotations

from typing import Any

from linkmem.filters import Cond, Node, compile_filter
from linkmem.types import Scope


def scope_where(scope: Scope, alias: str = "s") -> tuple[str, list[Any]]:
    """Subset match on the scopes table."""
    items = scope.items()
    if not items:
        return "1", []
    return " AND ".join(f"{alias}.{k} = ?" for k, _ in items), [v for _, v in items]


def exact_scope_params(scope: Scope) -> tuple[str, str, str]:
    return tuple(v or "" for v in scope.as_tuple())  # type: ignore[return-value]


def filter_sql(node: Node | None, column: str = "m.metadata") -> tuple[str, list[Any]]:
    """Compile a parsed filter to a WHERE fragment over a JSON text column."""
    return compile_filter(node, lambda cond: _cond_sql(cond, column), "1")


def _path(key: str) -> str:
    return '$."' + key + '"'


def _eq_sql(column: str, key: str, value: Any) -> tuple[str, list[Any]]:
    path = _path(key)
    if value is None:
        return f"(json_type({column}, ?) = 'null')", [path]
    if isinstance(value, bool):
        return f"(json_type({column}, ?) = ?)", [path, "true" if value else "false"]
    if isinstance(value, str):
        return f"(json_type({column}, ?) = 'text' AND json_extract({column}, ?) = ?)", [
            path,
            path,
            value,
        ]
    return (
        f"(json_type({column}, ?) IN ('integer', 'real') AND json_extract({column}, ?) = ?)",
        [path, path, value],
    )


_RANGE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _cond_sql(cond: Cond, column: str) -> tuple[str, list[Any]]:
    """A condition is true or false, never NULL: a missing key must not poison NOT/OR."""
    sql, args = _cond_sql_raw(cond, column)
    return f"coalesce({sql}, 0)", args


def _cond_sql_raw(cond: Cond, column: str) -> tuple[str, list[Any]]:
    key, op, value = cond.key, cond.op, cond.value
    path = _path(key)
    if op == "eq":
        return _eq_sql(column, key, value)
    if op == "ne":
        sql, args = _eq_sql(column, key, value)
        return f"(NOT coalesce({sql}, 0))", args
    if op in ("in", "nin"):
        parts = [_eq_sql(column, key, v) for v in value]
        sql = "(" + " OR ".join(p for p, _ in parts) + ")"
        args = [x for _, a in parts for x in a]
        return (sql, args) if op == "in" else (f"(NOT coalesce({sql}, 0))", args)
    if op in _RANGE:
        kind = "('integer', 'real')" if not isinstance(value, str) else "('text')"
        return (
            f"(json_type({column}, ?) IN {kind} AND json_extract({column}, ?) {_RANGE[op]} ?)",
            [path, path, value],
        )
    return _contains_sql(column, path, value, op == "icontains")


def _contains_sql(column: str, path: str, value: Any, fold: bool) -> tuple[str, list[Any]]:
    text = str(value)
    if fold:
        string_test = f"instr(lower(json_extract({column}, ?)), lower(?)) > 0"
    else:
        string_test = f"instr(json_extract({column}, ?), ?) > 0"
    sql = (
        f"(CASE json_type({column}, ?) "
        f"WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each({column}, ?) j WHERE j.value = ?) "
        f"WHEN 'text' THEN {string_test} ELSE 0 END)"
    )
    return sql, [path, path, value, path, text]
