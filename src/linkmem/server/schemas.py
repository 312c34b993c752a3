"""Request bodies of the ``/v1`` routes. A body that is not a JSON object, lacks a required
field or has an unknown one is refused (422), so a typo never silently drops a filter; the
values themselves are checked by ``Memory`` (a bad value is a 400 with linkmem's message,
the same an embedded ``Memory`` raises)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScopeBody(Body):
    user_id: str | int | None = None
    agent_id: str | int | None = None
    run_id: str | int | None = None

    def scope(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id}


class AddBody(ScopeBody):
    messages: Any = Field(
        description="A text, a message {role, content[, name]} or a list of messages"
    )
    metadata: Any = None
    infer: StrictBool = False
    timestamp: Any = Field(
        default=None, description="When it was said: ISO-8601, or epoch seconds (default: now)"
    )


class AddBatchBody(ScopeBody):
    items: Any = Field(description="Items as /v1/memories takes them, one per memory")
    metadata: Any = Field(default=None, description="Metadata per item (same length as items)")
    infer: StrictBool = False
    timestamp: Any = Field(
        default=None, description="One timestamp for all items, or one (or null) per item"
    )


class SearchBody(ScopeBody):
    query: Any
    filters: Any = None
    top_k: Any = 10
    threshold: Any = None
    explain: StrictBool = False
    signals: Any = Field(default=None, description="{dense, keyword, entities, time}: on/off")


class UpdateBody(ScopeBody):
    text: Any = None
    metadata: Any = None


class MergeBody(ScopeBody):
    keep: Any
    drop: Any


class RenameBody(ScopeBody):
    entity: Any = Field(description="The entity's id or name")
    new_name: Any


class KeyBody(Body):
    tenant: StrictStr | None = Field(
        default=None, description="user:ID, agent:ID or user:ID,agent:ID (none for admin)"
    )
    role: StrictStr = "write"
    name: StrictStr | None = None


class Mem0SearchBody(ScopeBody):
    """Mem0's ``POST /search`` body; ``limit``/``top_k`` and ``threshold`` are optional."""

    query: Any
    filters: Any = None
    limit: Any = None
    top_k: Any = None
    threshold: Any = None
