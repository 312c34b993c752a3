"""Input checks shared by every call. Each raises ``InvalidInput`` before anything is written.

One rule for every backend: what any backend cannot store alike (NUL, lone surrogates,
integers beyond 64 bits, NaN and infinity, deep nesting) is refused here, so SQLite and
PostgreSQL accept and refuse the same input. Messages show values through ``shown``, which
never fails and never grows long.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from linkmem.config import Settings
from linkmem.errors import InvalidInput
from linkmem.types import SCOPE_KEYS, Scope

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-/]{0,127}$")
#: Containers (dicts, lists) nested in metadata or a filter, the outermost one included.
#: SQLite's parser overflows at about 36 nested filter levels; JSON has no use for more.
MAX_NESTING = 32
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: ``top_k`` and ``limit``: results per call.
MAX_COUNT = 10_000
#: ``offset`` of a listing (PostgreSQL refuses offsets beyond 64 bits, SQLite beyond 63).
MAX_OFFSET = 1_000_000_000
#: Rows per transaction of a restore, or per query of an export.
MAX_BATCH_SIZE = 100_000
#: A speaker name (``messages[i].name``) or a new entity name.
MAX_NAME_CHARS = 200
DEFAULT_MAX_METADATA_BYTES = Settings.max_metadata_bytes
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ROLES = {"user", "assistant", "system", "tool", "function", "developer"}


@dataclass(frozen=True)
class Message:
    """One message to remember: its text, role and optional speaker name."""

    content: str
    role: str = "user"
    name: str | None = None


# values in messages -------------------------------------------------------------------------------
def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages: never fails (a huge int or
    a deeply nested list has no repr) and never carries a lone surrogate or NUL as is."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


# the storage rules, one each ----------------------------------------------------------------------
def check_storable(text: str, what: str) -> str:
    """``text`` unchanged, or ``InvalidInput`` when it holds a character that no backend
    stores alike: NUL (PostgreSQL refuses it) or a lone surrogate (not Unicode, so no UTF-8
    file or database takes it)."""
    bad = _UNSTORABLE.search(text)
    if bad is None:
        return text
    if bad.group() == "\x00":
        raise InvalidInput(
            f"{what} contains a NUL character (\\x00) at position {bad.start()}; remove it "
            "(PostgreSQL cannot store it, so no backend accepts it)"
        )
    raise InvalidInput(
        f"{what} contains a lone surrogate {bad.group()!r} at position {bad.start()}, which "
        "is not valid Unicode; decode the input correctly (or with errors='replace') or "
        "remove it"
    )


def check_int(value: int, what: str) -> int:
    """A plain ``int`` within the signed 64-bit range that both backends store exactly."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidInput(
            f"{what} is an integer of {value.bit_length()} bits, outside the signed 64-bit "
            "range (-2**63 to 2**63-1); pass it as a string"
        )
    return int(value)


def check_finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise InvalidInput(f"{what} is {value}, which JSON cannot hold; use a finite number")
    return float(value)


def check_scalar(value: Any, what: str) -> str | int | float | bool | None:
    """A JSON scalar both backends store alike, or ``InvalidInput`` saying why not."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return check_storable(str(value), what)
    if isinstance(value, int):
        return check_int(value, what)
    if isinstance(value, float):
        return check_finite(value, what)
    raise InvalidInput(
        f"{what} is a {type(value).__name__} ({shown(value)}); use a string, number, "
        "boolean or null"
    )


def check_nesting(value: Any, what: str) -> None:
    """Refuse dicts and lists nested more than ``MAX_NESTING`` deep (the outermost counts),
    before anything recurses into them."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        if depth > MAX_NESTING:
            raise InvalidInput(f"{what} is nested more than {MAX_NESTING} levels deep; flatten it")
        stack.extend((child, depth + 1) for child in children)


def validate_int(value: Any, name: str, low: int, high: int) -> int:
    """An ``int`` (not a bool) from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{name} must be an integer from {low} to {high}, got {shown(value)}")
    return int(value)


# scopes and ids -----------------------------------------------------------------------------------
def validate_scope_id(key: str, value: Any) -> str | None:
    """A scope id: None, or a 1-128 character id (ints are accepted and turned into text).
    ``"*"``, empty strings and whitespace never widen a scope: they are rejected."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(f"{key} must be a string, got {type(value).__name__}")
    text = str(check_int(value, key) if isinstance(value, int) else value).strip()
    if not _ID_PATTERN.match(text):
        raise InvalidInput(
            f"{key}={shown(value)} is not a valid id: use 1-128 characters, letters, digits "
            "and ._:@+-/ (no spaces, no wildcards such as '*')"
        )
    return text


def make_scope(user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Scope:
    """A validated scope that has at least one id set."""
    scope = lookup_scope(user_id, agent_id, run_id)
    if scope.is_empty():
        raise InvalidInput(
            "pass at least one of user_id, agent_id or run_id to scope the call "
            "(CLI: --user, --agent or --run)"
        )
    return scope


def lookup_scope(user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Scope:
    """A validated scope for calls by id, where no scope at all means "any scope"."""
    return Scope(
        validate_scope_id("user_id", user_id),
        validate_scope_id("agent_id", agent_id),
        validate_scope_id("run_id", run_id),
    )


def lift_scope_from_filters(
    filters: Mapping[str, Any] | None, given: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Accept Mem0-style ``filters={"user_id": ...}``: move top-level scope keys into the
    scope kwargs. A scope key given both ways with different values is an error."""
    if filters is None:
        return given, None
    if not isinstance(filters, Mapping):
        raise InvalidInput(f"filters must be a dict, got {type(filters).__name__}")
    scope = dict(given)
    rest = {}
    for key, value in filters.items():
        if key not in SCOPE_KEYS:
            rest[key] = value
        elif scope.get(key) not in (None, value):
            raise InvalidInput(f"{key} is given twice with different values; pass it once")
        else:
            scope[key] = value
    return scope, rest or None


def validate_memory_id(memory_id: Any) -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory id must be a non-empty string, got {shown(memory_id)}")
    return check_storable(memory_id.strip(), "memory id")


def validate_name(name: Any, what: str) -> str:
    """A speaker or entity name: a string of at most ``MAX_NAME_CHARS`` characters."""
    if not isinstance(name, str):
        raise InvalidInput(f"{what} must be a string, got {type(name).__name__}")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidInput(
            f"{what} has {len(name)} characters, more than {MAX_NAME_CHARS}; use a shorter name"
        )
    return check_storable(name, what)


# texts and metadata -------------------------------------------------------------------------------
def validate_text(text: Any, max_chars: int, what: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string, got {type(text).__name__}")
    stripped = text.strip()
    is_query = what == "query"
    if not stripped:
        wanted = "the text to search for" if is_query else "the text to remember"
        raise InvalidInput(f"{what} is empty; pass {wanted}")
    if len(stripped) > max_chars:
        fix = "shorten the query" if is_query else "split it into smaller memories"
        raise InvalidInput(
            f"{what} has {len(stripped)} characters, more than the limit of {max_chars}; "
            f"{fix} or raise max_text_chars"
        )
    return check_storable(stripped, what)


def validate_metadata(
    metadata: Any, max_bytes: int | None = DEFAULT_MAX_METADATA_BYTES, what: str = "metadata"
) -> dict[str, Any]:
    """A plain JSON copy of ``metadata``: a dict whose keys are non-empty strings other than
    the scope ids, holding strings, 64-bit integers, finite floats, booleans, null, lists and
    dicts (string keys), nested at most ``MAX_NESTING`` deep and at most ``max_bytes`` as
    compact UTF-8 JSON (None: no size limit; a restore brings back what was stored)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"{what} must be a dict, got {type(metadata).__name__}")
    bad = [k for k in metadata if not isinstance(k, str) or not k]
    if bad:
        raise InvalidInput(f"{what} keys must be non-empty strings, got {shown(bad)}")
    clash = sorted(set(metadata) & set(SCOPE_KEYS))
    if clash:
        raise InvalidInput(f"{what} must not contain {clash}: pass scope ids as arguments")
    check_nesting(metadata, what)
    plain = _plain_json(metadata, what)
    if max_bytes is not None:
        _check_size(plain, max_bytes, what)
    return plain


def _plain_json(value: Any, where: str) -> Any:
    """``value`` as plain JSON types; recursion is safe after ``check_nesting``."""
    if isinstance(value, Mapping):
        return {_json_key(k, where): _plain_json(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return check_scalar(value, where)


def _json_key(key: Any, where: str) -> str:
    if not isinstance(key, str):
        raise InvalidInput(f"{where} has the key {shown(key)}; JSON keys must be strings")
    return check_storable(str(key), f"{where} key {key!r}")


def _check_size(metadata: dict[str, Any], max_bytes: int, what: str) -> None:
    size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(
            f"{what} is {size} bytes as JSON, more than the limit of {max_bytes}; keep large "
            "content in the memory text or elsewhere, or raise max_metadata_bytes"
        )


# messages and batches -----------------------------------------------------------------------------
def validate_items(items: Any) -> list[Any]:
    """The items of ``add_batch``: a non-empty list or tuple. A string, bytes or a dict is
    one item, not a batch of its characters or keys."""
    if not isinstance(items, list | tuple):
        raise InvalidInput(
            f"items must be a list of texts or messages, got {type(items).__name__}; "
            "to remember one text or message, use add()"
        )
    if not items:
        raise InvalidInput("items is empty; pass at least one text or message")
    return list(items)


def validate_metadata_list(metadata: Any, count: int) -> list[Any]:
    """Per-item metadata of ``add_batch``: None, or a list with one entry per item."""
    if metadata is None:
        return [None] * count
    if not isinstance(metadata, list | tuple):
        raise InvalidInput(
            f"metadata must be a list with one dict (or None) per item, got "
            f"{type(metadata).__name__}"
        )
    if len(metadata) != count:
        raise InvalidInput(
            f"metadata has {len(metadata)} entries for {count} items; pass one per item"
        )
    return list(metadata)


def validate_timestamp(value: Any, what: str = "timestamp") -> datetime | None:
    """A memory's own time: an ISO-8601 string, a ``datetime`` or ``date`` (no time zone:
    UTC) or epoch seconds -> an aware UTC ``datetime``; None stays None."""
    if value is None:
        return None
    try:
        if isinstance(value, datetime):
            found = value
        elif isinstance(value, date):
            found = datetime(value.year, value.month, value.day)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            found = datetime.fromtimestamp(check_finite(float(value), what), UTC)
        elif isinstance(value, str) and value.strip():
            found = datetime.fromisoformat(value.strip())
        else:
            raise TypeError
        found = found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError) as e:
        raise InvalidInput(
            f"{what} must be an ISO-8601 date or time ('2023-05-25', '2023-05-25T13:14:00Z'), "
            f"a datetime or epoch seconds, got {shown(value)}"
        ) from e
    if not 1 <= found.year <= 9998:
        raise InvalidInput(f"{what} must lie in the years 1 to 9998, got {shown(value)}")
    return found


def validate_timestamps(value: Any, count: int) -> list[datetime | None]:
    """``add_batch``'s ``timestamp``: one for every item, or a list with one per item."""
    if not isinstance(value, list | tuple):
        return [validate_timestamp(value)] * count
    if len(value) != count:
        raise InvalidInput(
            f"timestamp has {len(value)} entries for {count} items; pass one per item "
            "(or one timestamp for all)"
        )
    return [validate_timestamp(t, f"timestamp[{i}]") for i, t in enumerate(value)]


def normalise_messages(messages: Any, max_chars: int) -> list[Message]:
    """A string, one message dict or a list of them -> the messages to remember
    (system messages are context, not memories, and are skipped)."""
    if isinstance(messages, str):
        return [Message(validate_text(messages, max_chars))]
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list | tuple) or not messages:
        raise InvalidInput(
            "messages must be a non-empty string, a {'role', 'content'} dict or a list of them"
        )
    parsed = [_parse_message(m, i, max_chars) for i, m in enumerate(messages)]
    kept = [m for m in parsed if m is not None]
    if not kept:
        raise InvalidInput("messages contain only system messages; nothing to remember")
    return kept


def _parse_message(message: Any, index: int, max_chars: int) -> Message | None:
    if not isinstance(message, Mapping):
        raise InvalidInput(f"messages[{index}] must be a dict with role and content")
    role = message.get("role", "user")
    if not isinstance(role, str) or role not in _ROLES:
        raise InvalidInput(f"messages[{index}] has role {shown(role)}; use one of {sorted(_ROLES)}")
    if role == "system":
        return None
    if "content" not in message:
        raise InvalidInput(f"messages[{index}] has no 'content'")
    content = validate_text(message["content"], max_chars, f"messages[{index}].content")
    name = message.get("name")
    if name is not None:
        name = validate_name(name, f"messages[{index}].name")
    return Message(content, role, name or None)


# reads --------------------------------------------------------------------------------------------
def validate_top_k(top_k: Any, name: str = "top_k") -> int:
    return validate_int(top_k, name, 1, MAX_COUNT)


def validate_offset(offset: Any, name: str = "offset") -> int:
    return validate_int(offset, name, 0, MAX_OFFSET)


def validate_batch_size(batch_size: Any) -> int:
    return validate_int(batch_size, "batch_size", 1, MAX_BATCH_SIZE)


def validate_threshold(threshold: Any) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InvalidInput(f"threshold must be a number in [0, 1], got {shown(threshold)}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise InvalidInput(f"threshold must be in [0, 1], got {threshold}")
    return float(threshold)
