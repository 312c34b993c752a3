"""The scope a stdio MCP server is bound to: ``linkmem mcp --user alice [--agent coder]
[--run R]``.

A stdio server serves one local client, but its tools are driven by a model, so the scope
is pinned exactly as a server pins a tenant (``linkmem.tenancy``): calls may narrow it (an
``agent_id`` or ``run_id`` under alice) and never widen it; another scope's memory id is
``NotFound``. ``--run`` pins the run id too.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linkmem.errors import ConfigError, PermissionDenied
from linkmem.tenancy import Tenant
from linkmem.validation import validate_scope_id

if TYPE_CHECKING:
    from linkmem.memory import Memory


def login_name() -> str:
    """The user id a stdio server takes when given none: the login name."""
    try:
        return getpass.getuser()
    except (OSError, KeyError) as e:  # no login name (some containers)
        raise ConfigError("no login name to use as the user id; pass --user <id>") from e


@dataclass(frozen=True)
class BoundScope:
    """The tenant (user and/or agent) a stdio server is bound to, and maybe a run."""

    tenant: Tenant
    run_id: str | None = None

    @classmethod
    def of(cls, user_id: str | None, agent_id: str | None, run_id: str | None) -> BoundScope:
        """The scope of the options given; no user and no agent: the login name's user.
        A bad id is ``InvalidInput``."""
        if user_id is None and agent_id is None:
            user_id = login_name()
        tenant = Tenant(user_id=user_id, agent_id=agent_id)
        return cls(tenant, validate_scope_id("run_id", run_id))

    def ids(self) -> dict[str, str]:
        """The ids that are set, as scope keywords."""
        ids = {"user_id": self.tenant.user_id, "agent_id": self.tenant.agent_id}
        return {k: v for k, v in {**ids, "run_id": self.run_id}.items() if v is not None}

    def view(self, memory: Memory) -> Any:
        """``memory`` as the tools of this server see it."""
        view = memory.for_tenant(self.tenant)
        return view if self.run_id is None else RunPinned(view, self.run_id)


class RunPinned:
    """A tenant view whose every call is also pinned to one run id."""

    def __init__(self, view: Any, run_id: str) -> None:
        self.view = view
        self.run_id = run_id

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.view, name)

        def pinned(*args: Any, run_id: Any = None, **kwargs: Any) -> Any:
            if run_id is not None and str(run_id).strip() != self.run_id:
                raise PermissionDenied(
                    f"this server is bound to run_id={self.run_id!r} and cannot reach "
                    f"run_id={run_id!r}; leave run_id out"
                )
            return call(*args, run_id=self.run_id, **kwargs)

        return pinned
