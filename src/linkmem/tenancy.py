"""Tenant-bound access: the one place that decides which scopes a caller may reach.

``Memory`` itself trusts its caller: a call by id with no scope (``get(id)``) reaches any
memory, and a scope names only the ids it sets (``agent_id="coach"`` spans every user of that
agent). A server or any other shell that serves many tenants wraps it instead:
``memory.for_tenant(Tenant(user_id="alice"))`` returns a view whose every call is pinned to
the tenant's ids. A call may narrow the scope (an ``agent_id`` or ``run_id`` under alice) but
never widen it: a scope id that disagrees with the tenant raises ``PermissionDenied``, and a
call by id always checks the memory's scope, so another tenant's id is ``NotFound``, exactly
like an id that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linkmem.errors import InvalidInput, PermissionDenied
from linkmem.types import SCOPE_KEYS
from linkmem.validation import lift_scope_from_filters, validate_scope_id

if TYPE_CHECKING:
    from linkmem.memory import Memory

#: Calls a tenant may make: each takes ``user_id`` / ``agent_id`` / ``run_id`` keywords.
SCOPED_CALLS = frozenset(
    {
        "add",
        "add_batch",
        "search",
        "get",
        "get_all",
        "count",
        "update",
        "delete",
        "delete_all",
        "history",
        "entities",
        "entity_memories",
        "memory_entities",
        "related_entities",
        "merge_entities",
        "rename_entity",
    }
)


@dataclass(frozen=True)
class Tenant:
    """The ids a caller is bound to: a user (``user_id``), an agent (``agent_id``) or both."""

    user_id: str | None = None
    agent_id: str | None = None

    def __post_init__(self) -> None:
        if self.user_id is None and self.agent_id is None:
            raise InvalidInput("a tenant is bound to a user_id, an agent_id or both")
        validate_scope_id("user_id", self.user_id)
        validate_scope_id("agent_id", self.agent_id)

    def pin(self, scope: dict[str, Any]) -> dict[str, Any]:
        """The scope ids of a call with the tenant's own filled in; refuses any other."""
        pinned = dict(scope)
        for key, own in (("user_id", self.user_id), ("agent_id", self.agent_id)):
            if own is None:
                continue
            asked = pinned.get(key)
            if asked is not None and str(asked).strip() != own:
                raise PermissionDenied(
                    f"this caller is bound to {key}={own!r} and cannot reach {key}={asked!r}; "
                    f"leave {key} out or pass {own!r}"
                )
            pinned[key] = own
        return pinned


class TenantMemory:
    """A ``Memory`` seen by one tenant: the scoped calls only, each pinned by ``Tenant.pin``."""

    def __init__(self, memory: Memory, tenant: Tenant) -> None:
        self.memory = memory
        self.tenant = tenant

    def __getattr__(self, name: str) -> Any:
        if name not in SCOPED_CALLS:
            raise AttributeError(f"{name!r} is not available to a tenant (whole-store call)")
        call = getattr(self.memory, name)

        def pinned(*args: Any, **kwargs: Any) -> Any:
            return call(*args, **self._pinned(kwargs))

        pinned.__name__ = name
        pinned.__doc__ = call.__doc__
        return pinned

    def _pinned(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the scope ids pinned to the tenant. Mem0-style scope ids inside
        ``filters`` are pinned too: another tenant's id is refused wherever it is given."""
        scope = {k: kwargs.pop(k, None) for k in SCOPE_KEYS}
        if "filters" in kwargs:
            lifted, kwargs["filters"] = lift_scope_from_filters(kwargs["filters"], {})
            self.tenant.pin(lifted)
            scope, _ = lift_scope_from_filters(lifted, scope)
        return {**kwargs, **self.tenant.pin(scope)}

    def history(self, memory_id: Any, **kwargs: Any) -> Any:
        """A live memory's history in the tenant's scope. Any other id (another tenant's, a
        deleted one, one that never existed) is the same ``NotFound`` as ``get``'s, so the
        answer never tells whether the id exists elsewhere."""
        pinned = self._pinned(kwargs)
        self.memory.get(memory_id, **pinned)
        return self.memory.history(memory_id, **pinned)
