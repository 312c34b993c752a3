"""Metadata filters: parsed once into a small tree that every backend compiles to its own SQL.

Syntax (Mem0-compatible where that costs nothing)::

    {"topic": "pets"}                       equality; a list value means "in"
    {"n": {"gte": 3, "lt": 10}}             operators: eq ne in nin gt gte lt lte contains icontains
    {"AND": [...]}, {"OR": [...]}, {"NOT": {...}} or {"NOT": [...]} (none of them)
Several keys in one dict are ANDed. Range values are numbers or ISO-8601 dates/datetimes.
Values follow the storage rules of ``linkmem.validation`` (no NUL or lone surrogates, 64-bit
integers, finite numbers); a filter is nested at most ``MAX_NESTING`` deep and compares at most
``MAX_FILTER_TERMS`` values, so every backend compiles it to a query it can run.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from linkmem.errors import InvalidInput
from linkmem.validation import check_nesting, check_scalar, shown

OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains")
RANGE_OPS = ("gt", "gte", "lt", "lte")
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-.]{0,63}$")
#: Values compared by one filter (each value of an ``in`` list counts): SQLite refuses an
#: expression tree deeper than 1000, and an OR of n values is n deep.
MAX_FILTER_TERMS = 500
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$")


@dataclass(frozen=True)
class Cond:
    key: str
    op: str
    value: Any


@dataclass(frozen=True)
class All:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class AnyOf:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    child: Node


Node = Cond | All | AnyOf | Not


def parse_filters(filters: Mapping[str, Any] | None) -> Node | None:
    """Validate and parse ``filters``; ``None`` or ``{}`` means no filter."""
    if filters is None or (isinstance(filters, Mapping) and not filters):
        return None
    check_nesting(filters, "filters")
    node = _parse_dict(filters, "filters")
    _check_terms(_count_terms(node))
    return node


def _check_terms(terms: int) -> None:
    if terms > MAX_FILTER_TERMS:
        raise InvalidInput(
            f"filters compare {terms} values, more than {MAX_FILTER_TERMS}; split the query "
            "or filter on a coarser key"
        )


def _count_terms(node: Node) -> int:
    if isinstance(node, All | AnyOf):
        return sum(_count_terms(child) for child in node.children)
    if isinstance(node, Not):
        return _count_terms(node.child)
    return len(node.value) if node.op in ("in", "nin") else 1


def _parse_dict(spec: Any, where: str) -> Node:
    if not isinstance(spec, Mapping) or not spec:
        raise InvalidInput(f"{where} must be a non-empty dict of conditions")
    nodes = [_parse_entry(key, value, f"{where}.{_label(key)}") for key, value in spec.items()]
    return nodes[0] if len(nodes) == 1 else All(tuple(nodes))


def _label(key: Any) -> str:
    """A key as shown in messages: itself when it is a valid key, else its repr."""
    valid = isinstance(key, str) and (key in ("AND", "OR", "NOT") or _KEY.fullmatch(key))
    return key if valid else shown(key)


def _parse_entry(key: Any, value: Any, where: str) -> Node:
    if key in ("AND", "OR"):
        children = _parse_list(value, where)
        return All(children) if key == "AND" else AnyOf(children)
    if key == "NOT":  # a list means "none of these"
        if isinstance(value, Mapping):
            return Not(_parse_dict(value, where))
        return Not(AnyOf(_parse_list(value, where)))
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InvalidInput(
            f"{where} is not a valid metadata key: use 1-64 letters, digits and _-. (not "
            "starting with - or .), or AND / OR / NOT"
        )
    if isinstance(value, Mapping):
        return _parse_operators(key, value, where)
    if isinstance(value, list):
        return Cond(key, "in", _scalars(value, where))
    return Cond(key, "eq", _scalar(value, where))


def _parse_list(value: Any, where: str) -> tuple[Node, ...]:
    if not isinstance(value, list) or not value:
        raise InvalidInput(f"{where} must be a non-empty list of conditions")
    return tuple(_parse_dict(item, f"{where}[{i}]") for i, item in enumerate(value))


def _parse_operators(key: str, ops: Mapping[str, Any], where: str) -> Node:
    if not ops:
        raise InvalidInput(f"{where} has no operator; use one of {', '.join(OPERATORS)}")
    conds = [_parse_operator(key, op, value, where) for op, value in ops.items()]
    return conds[0] if len(conds) == 1 else All(tuple(conds))


def _parse_operator(key: str, op: Any, value: Any, where: str) -> Cond:
    if op not in OPERATORS:
        raise InvalidInput(
            f"{where}: unknown operator {shown(op)}; use one of {', '.join(OPERATORS)}"
        )
    if op in ("in", "nin"):
        return Cond(key, op, _scalars(value, f"{where}.{op}"))
    if op in RANGE_OPS:
        return Cond(key, op, _range_value(value, f"{where}.{op}"))
    if op in ("contains", "icontains") and not isinstance(value, str | int | float):
        raise InvalidInput(f"{where}.{op} needs a string or number")
    return Cond(key, op, _scalar(value, f"{where}.{op}"))


def _scalar(value: Any, where: str) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return check_scalar(value, where)


def _scalars(value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidInput(f"{where} needs a non-empty list of values")
    _check_terms(len(value))  # before checking each of a huge list
    return tuple(_scalar(v, where) for v in value)


def _range_value(value: Any, where: str) -> Any:
    value = _scalar(value, where)
    if isinstance(value, bool) or value is None:
        raise InvalidInput(f"{where} needs a number or an ISO date, got {shown(value)}")
    if isinstance(value, str) and not _ISO.fullmatch(value):
        raise InvalidInput(
            f"{where} needs a number or an ISO date (YYYY-MM-DD), got {shown(value)}"
        )
    return value


def matches(node: Node | None, metadata: Mapping[str, Any]) -> bool:
    """Evaluate a parsed filter in Python (the reference the SQL compilers are tested against)."""
    if node is None:
        return True
    if isinstance(node, All):
        return all(matches(c, metadata) for c in node.children)
    if isinstance(node, AnyOf):
        return any(matches(c, metadata) for c in node.children)
    if isinstance(node, Not):
        return not matches(node.child, metadata)
    return _cond_matches(node, metadata)


def _cond_matches(cond: Cond, metadata: Mapping[str, Any]) -> bool:
    present = cond.key in metadata
    actual = metadata.get(cond.key)
    op, want = cond.op, cond.value
    if op == "eq":
        return present and _same(actual, want)
    if op == "ne":
        return not (present and _same(actual, want))
    if op == "in":
        return present and any(_same(actual, w) for w in want)
    if op == "nin":
        return not (present and any(_same(actual, w) for w in want))
    if op in ("contains", "icontains"):
        return present and _contains(actual, want, op == "icontains")
    return present and _compare(actual, op, want)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _contains(actual: Any, want: Any, fold: bool) -> bool:
    if isinstance(actual, list):
        return any(_same(item, want) for item in actual)
    if isinstance(actual, str):
        needle = str(want)
        return needle.lower() in actual.lower() if fold else needle in actual
    return False


def _compare(actual: Any, op: str, want: Any) -> bool:
    numeric = isinstance(want, int | float) and not isinstance(want, bool)
    if numeric != (isinstance(actual, int | float) and not isinstance(actual, bool)):
        return False
    if not numeric and not isinstance(actual, str):
        return False
    return {
        "gt": actual > want,
        "gte": actual >= want,
        "lt": actual < want,
        "lte": actual <= want,
    }[op]


def compile_filter(
    node: Node | None, leaf: Callable[[Cond], tuple[str, list[Any]]], always: str
) -> tuple[str, list[Any]]:
    """Walk the AND/OR/NOT tree into SQL; ``leaf`` compiles one condition for a backend and
    ``always`` is that backend's literal for "no filter"."""
    if node is None:
        return always, []
    if isinstance(node, All | AnyOf):
        parts = [compile_filter(child, leaf, always) for child in node.children]
        joiner = " AND " if isinstance(node, All) else " OR "
        return "(" + joiner.join(p for p, _ in parts) + ")", [a for _, args in parts for a in args]
    if isinstance(node, Not):
        inner, args = compile_filter(node.child, leaf, always)
        return f"(NOT {inner})", args
    return leaf(node)
