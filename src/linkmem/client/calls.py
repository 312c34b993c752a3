"""Each ``Memory`` call as an HTTP request to ``linkmem serve``: one builder per call, with the
call's own signature and docstring. ``RemoteMemory`` and ``AsyncRemoteMemory`` are generated
from this one table, so the two clients cannot drift apart."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any
from urllib.parse import quote

from linkmem.search import Signals
from linkmem.validation import validate_memory_id

Result = dict[str, Any]


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    #: Safe to send again when the answer was lost (reads, and writes that say so).
    idempotent: bool = False
    #: The key of the answer that is the call's result (None: the whole answer).
    unwrap: str | None = None


def scope_params(user_id: Any, agent_id: Any, run_id: Any) -> dict[str, Any]:
    """The scope ids that are set."""
    given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: v for k, v in given.items() if v is not None}


def _memory_path(memory_id: Any, suffix: str = "") -> str:
    return f"/v1/memories/{quote(validate_memory_id(memory_id), safe='')}{suffix}"


def _timestamp(value: Any) -> dict[str, Any]:
    """``timestamp`` as JSON carries it (a datetime or date as ISO-8601); nothing when unset."""
    if value is None:
        return {}
    if isinstance(value, list | tuple):
        return {"timestamp": [_iso(v) for v in value]}
    return {"timestamp": _iso(value)}


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value


def _read(method: str, path: str, **params: Any) -> Call:
    return Call(method, path, {k: v for k, v in params.items() if v is not None}, None, True)


def add(
    messages: Any,
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
    metadata: Any = None,
    infer: bool = False,
    timestamp: Any = None,
) -> Call:
    """Remember a text, a message dict or a list of messages (each non-system message is
    one memory)."""
    body = {"messages": messages, **scope_params(user_id, agent_id, run_id), "metadata": metadata}
    return Call("POST", "/v1/memories", body={**body, "infer": infer, **_timestamp(timestamp)})


def add_batch(
    items: Any,
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
    metadata: Any = None,
    infer: bool = False,
    timestamp: Any = None,
) -> Call:
    """Add many items (each as ``add`` takes it) in one scope, with per-item metadata."""
    body = {"items": items, **scope_params(user_id, agent_id, run_id), "metadata": metadata}
    return Call(
        "POST", "/v1/memories/batch", body={**body, "infer": infer, **_timestamp(timestamp)}
    )


def search(
    query: Any,
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
    filters: Any = None,
    top_k: Any = 10,
    threshold: Any = None,
    explain: bool = False,
    signals: Any = None,
) -> Call:
    """Hybrid search (dense + BM25 + entity links) in a scope; ``signals`` (a ``Signals``)
    turns signals off for ablations."""
    body = {"query": query, **scope_params(user_id, agent_id, run_id), "filters": filters}
    body.update(top_k=top_k, threshold=threshold, explain=explain)
    if signals is not None:
        body["signals"] = signals.to_dict() if isinstance(signals, Signals) else signals
    return Call("POST", "/v1/memories/search", body=body, idempotent=True)


def get(memory_id: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Call:
    """One memory by id (checked against the scope when one is given)."""
    return _read("GET", _memory_path(memory_id), **scope_params(user_id, agent_id, run_id))


def get_all(
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
    filters: Any = None,
    limit: Any = 100,
    offset: Any = 0,
) -> Call:
    """A scope's memories, newest first."""
    encoded = None if filters is None else json.dumps(filters)
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", "/v1/memories", **ids, filters=encoded, limit=limit, offset=offset)


def count(*, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Call:
    """How many memories a scope holds (no scope: the whole collection)."""
    call = _read("GET", "/v1/memories/count", **scope_params(user_id, agent_id, run_id))
    return replace(call, unwrap="count")


def update(
    memory_id: Any,
    text: Any = None,
    metadata: Any = None,
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
) -> Call:
    """Change a memory's text (re-embedded, re-indexed, re-linked) and/or merge metadata."""
    body = {"text": text, "metadata": metadata, **scope_params(user_id, agent_id, run_id)}
    return Call("PATCH", _memory_path(memory_id), body=body)


def delete(
    memory_id: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> Call:
    """Delete one memory, its links, and entities left with no links."""
    return Call("DELETE", _memory_path(memory_id), scope_params(user_id, agent_id, run_id))


def delete_all(
    *, user_id: Any = None, agent_id: Any = None, run_id: Any = None, across_users: bool = False
) -> Call:
    """Delete every memory of a scope (at least one scope id is required)."""
    params = {**scope_params(user_id, agent_id, run_id), "across_users": across_users}
    return Call("DELETE", "/v1/memories", params)


def history(
    memory_id: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> Call:
    """ADD / UPDATE / DELETE events of a memory, oldest first."""
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", _memory_path(memory_id, "/history"), **ids)


def memory_entities(
    memory_id: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> Call:
    """The entities linked to one memory."""
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", _memory_path(memory_id, "/entities"), **ids)


def entities(
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
    order: Any = "links",
    limit: Any = 100,
    offset: Any = 0,
) -> Call:
    """A scope's entities with kind and link count; ``order``: links, text or recent."""
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", "/v1/entities", **ids, order=order, limit=limit, offset=offset)


def entity_memories(
    entity: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> Call:
    """The memories linked to an entity (given by id or by name)."""
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", "/v1/entities/memories", entity=entity, **ids)


def related_entities(
    entity: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None, limit: Any = 20
) -> Call:
    """Entities that share memories with ``entity``, most shared first."""
    ids = scope_params(user_id, agent_id, run_id)
    return _read("GET", "/v1/entities/related", entity=entity, **ids, limit=limit)


def merge_entities(
    keep: Any, drop: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> Call:
    """Move every link of ``drop`` to ``keep`` and delete ``drop``."""
    body = {"keep": keep, "drop": drop, **scope_params(user_id, agent_id, run_id)}
    return Call("POST", "/v1/entities/merge", body=body)


def rename_entity(
    entity: Any,
    new_name: Any,
    *,
    user_id: Any = None,
    agent_id: Any = None,
    run_id: Any = None,
) -> Call:
    """Rename an entity; if the new name is another entity of the scope, merge into it."""
    body = {"entity": entity, "new_name": new_name, **scope_params(user_id, agent_id, run_id)}
    return Call("POST", "/v1/entities/rename", body=body)


def reset() -> Call:
    """Delete everything in this collection (admin key): memories, entities, links, history."""
    return Call("POST", "/v1/reset", idempotent=True)


def check(*, repair: bool = False) -> Call:
    """Verify the store's invariants (admin key); ``repair=True`` rebuilds what it can."""
    return Call("POST", "/v1/check", {"repair": repair}, idempotent=not repair)


def status() -> Call:
    """Store, models and counts (admin key)."""
    return _read("GET", "/v1/status")


def create_key(tenant: Any = None, role: Any = "write", name: Any = None) -> Call:
    """Create an API key (admin key); the answer holds its secret, once."""
    return Call("POST", "/v1/keys", body={"tenant": tenant, "role": role, "name": name})


def list_keys(include_revoked: bool = False) -> Call:
    return _read("GET", "/v1/keys", include_revoked=include_revoked)


def revoke_key(key_id: Any) -> Call:
    return Call("DELETE", f"/v1/keys/{quote(str(key_id), safe='')}", idempotent=True)


#: The calls both remote clients offer, generated from the builders above.
CALLS = {
    f.__name__: f
    for f in (
        add,
        add_batch,
        search,
        get,
        get_all,
        count,
        update,
        delete,
        delete_all,
        history,
        memory_entities,
        entities,
        entity_memories,
        related_entities,
        merge_entities,
        rename_entity,
        reset,
        check,
        status,
    )
}
