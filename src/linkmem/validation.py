"""Input checks shared by every call. Each raises ``InvalidInput`` before anything is written."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from linkmem.errors import InvalidInput
from linkmem.types import SCOPE_KEYS, Scope

_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-/]{0,127}$")
_ROLES = {"user", "assistant", "system", "tool", "function", "developer"}


@dataclass(frozen=True)
class Message:
    """One message to remember: its text, role and optional speaker name."""

    content: str
    role: str = "user"
    name: str | None = None


def validate_scope_id(key: str, value: Any) -> str | None:
    """A scope id: None, or a 1-128 character id (ints are accepted and turned into text).
    ``"*"``, empty strings and whitespace never widen a scope: they are rejected."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(f"{key} must be a string, got {type(value).__name__}")
    text = str(value).strip()
    if not _ID_PATTERN.match(text):
        raise InvalidInput(
            f"{key}={value!r} is not a valid id: use 1-128 characters, letters, digits and "
            "._:@+-/ (no spaces, no wildcards such as '*')"
        )
    return text


def make_scope(user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Scope:
    """A validated scope that has at least one id set."""
    scope = Scope(
        validate_scope_id("user_id", user_id),
        validate_scope_id("agent_id", agent_id),
        validate_scope_id("run_id", run_id),
    )
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


def validate_text(text: Any, max_chars: int, what: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise InvalidInput(f"{what} is empty; pass the text to remember")
    if len(stripped) > max_chars:
        raise InvalidInput(
            f"{what} has {len(stripped)} characters, more than the limit of {max_chars}; "
            "split it into smaller memories or raise max_text_chars"
        )
    return stripped


def validate_metadata(metadata: Any) -> dict[str, Any]:
    """A JSON-serialisable dict whose keys are strings and do not collide with scope ids."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata must be a dict, got {type(metadata).__name__}")
    bad = [k for k in metadata if not isinstance(k, str) or not k]
    if bad:
        raise InvalidInput(f"metadata keys must be non-empty strings, got {bad!r}")
    clash = sorted(set(metadata) & set(SCOPE_KEYS))
    if clash:
        raise InvalidInput(f"metadata must not contain {clash}: pass scope ids as arguments")
    try:
        return json.loads(json.dumps(dict(metadata), allow_nan=False))
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"metadata must be JSON-serialisable: {e}") from e


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
    if role not in _ROLES:
        raise InvalidInput(f"messages[{index}] has role {role!r}; use one of {sorted(_ROLES)}")
    if role == "system":
        return None
    if "content" not in message:
        raise InvalidInput(f"messages[{index}] has no 'content'")
    content = validate_text(message["content"], max_chars, f"messages[{index}].content")
    name = message.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidInput(f"messages[{index}].name must be a string")
    return Message(content, role, name or None)


def validate_top_k(top_k: Any, name: str = "top_k") -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1 or top_k > 10_000:
        raise InvalidInput(f"{name} must be an integer from 1 to 10000, got {top_k!r}")
    return top_k


def validate_threshold(threshold: Any) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InvalidInput(f"threshold must be a number in [0, 1], got {threshold!r}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise InvalidInput(f"threshold must be in [0, 1], got {threshold}")
    return float(threshold)


def validate_memory_id(memory_id: Any) -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput(f"memory id must be a non-empty string, got {memory_id!r}")
    return memory_id.strip()
