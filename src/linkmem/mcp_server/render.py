"""Compact text of each tool's result, for the model to read: one line per memory or entity,
with the ids it needs for the next call. The full JSON goes along as structured content."""

from __future__ import annotations

import json
from typing import Any

Result = dict[str, Any]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _memory_line(row: Result) -> str:
    meta = f" {_compact(row['metadata'])}" if row.get("metadata") else ""
    back = " (refers back to it)" if row.get("link") == "inherited" else ""
    return f"- {row['id']}: {row['memory']}{meta}{back}"


def _parts(details: Result) -> str:
    parts = f"dense {details['dense']:.2f}, bm25 {details['bm25']:.2f}"
    if details.get("entity_boost"):
        parts += f", entity +{details['entity_boost']:.2f} ({details['entity']})"
    if details.get("hop_boost"):
        parts += f", hop +{details['hop_boost']:.2f} ({details['hop_entity']})"
    if details.get("time_boost"):
        parts += f", time +{details['time_boost']:.2f}"
    return f"    parts: {parts}"


def _memories(n: int) -> str:
    return "1 memory" if n == 1 else f"{n} memories"


def added(result: Result) -> str:
    rows = result["results"]
    return f"Added {_memories(len(rows))}:\n" + "\n".join(_memory_line(r) for r in rows)


def hits(result: Result) -> str:
    rows = result["results"]
    if not rows:
        return "No memory matches."
    lines = [f"{len(rows)} found, best first:"]
    for row in rows:
        lines.append(f"- [{row['score']:.2f}] {row['id']}: {row['memory']}")
        if "score_details" in row:
            lines.append(_parts(row["score_details"]))
    return "\n".join(lines)


def memories(result: Result) -> str:
    rows = result["results"]
    if not rows:
        return "No memories."
    return f"{len(rows)} shown, newest first:\n" + "\n".join(_memory_line(r) for r in rows)


def memory(row: Result) -> str:
    scope = ", ".join(f"{k}={row[k]}" for k in ("user_id", "agent_id", "run_id") if k in row)
    return (
        f"{row['id']}: {row['memory']}\nmetadata: {_compact(row.get('metadata', {}))}\n"
        f"scope: {scope}; created {row['created_at']}; updated {row['updated_at']}"
    )


def updated(result: Result) -> str:
    return "Updated " + _memory_line(result["results"][0])[2:]


def deleted(result: Result) -> str:
    return "Deleted " + ", ".join(r["id"] for r in result["results"])


def _entity_line(row: Result) -> str:
    back = ", referred back to" if row.get("link") == "inherited" else ""
    count = _memories(row["link_count"])
    return f"- {row['entity']} ({row['kind']}, {count}{back}) id={row['id']}"


def entities(result: Result) -> str:
    rows = result["results"]
    if not rows:
        return "No entities."
    return f"{len(rows)} entities:\n" + "\n".join(_entity_line(r) for r in rows)


def entity_memories(result: Result) -> str:
    entity, rows = result["entity"], result["results"]
    head = f"{entity['entity']} ({entity['kind']}), id={entity['id']}:"
    return head + "\n" + "\n".join(_memory_line(r) for r in rows)


def related(result: Result) -> str:
    entity, rows = result["entity"], result["results"]
    if not rows:
        return f"Nothing shares a memory with {entity['entity']}."
    lines = [f"Sharing memories with {entity['entity']}:"]
    lines += [f"- {r['entity']} ({r['kind']}): {r['shared_memories']} shared" for r in rows]
    return "\n".join(lines)
