"""Who is calling, and what they may reach: API key → role and tenant → a view of ``Memory``.

Every shell that serves more than one caller (the REST server, MCP over HTTP) resolves the
caller here, once per request. A store with no active API key is *open*: the caller is an
admin (the server refuses to listen beyond loopback then). Otherwise a key is required;
``read`` keys may only read, ``write`` keys read and write their tenant's scopes, ``admin``
keys reach every scope and the whole-store calls (keys, reset, export, restore, check).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from linkmem.errors import ConfigError, PermissionDenied, Unauthorized
from linkmem.keys import ApiKey
from linkmem.tenancy import Tenant

if TYPE_CHECKING:
    from linkmem.memory import Memory

_RANK = {"read": 0, "write": 1, "admin": 2}
_SCHEMES = ("bearer", "token")


def secret_from_header(authorization: str | None) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` (or ``Token <key>``) header."""
    if authorization is None or not authorization.strip():
        return None
    scheme, _, secret = authorization.strip().partition(" ")
    if scheme.lower() not in _SCHEMES or not secret.strip():
        raise Unauthorized("send the API key as 'Authorization: Bearer <key>'")
    return secret.strip()


@dataclass(frozen=True)
class Caller:
    """A resolved caller: its key (None on an open store), role and tenant."""

    key: ApiKey | None
    role: str
    tenant: Tenant | None

    def require(self, role: str) -> None:
        """Refuse (``PermissionDenied``) a call that needs more than this caller's role."""
        if _RANK[self.role] < _RANK[role]:
            raise PermissionDenied(
                f"this API key has role {self.role!r}; this call needs a {role} key"
                + (" or an admin key" if role == "write" else "")
            )

    def view(self, memory: Memory, role: str = "read") -> Any:
        """``memory`` as this caller may use it for a call needing ``role``: the memory
        itself for an admin, else the tenant-pinned view (``linkmem.tenancy``)."""
        self.require(role)
        if self.tenant is None:
            return memory
        return memory.for_tenant(self.tenant)


def resolve_caller(memory: Memory, secret: str | None) -> Caller:
    """The caller presenting ``secret`` (None: no key sent)."""
    if secret is not None:
        key = memory.keys.authenticate(secret)
        return Caller(key, key.role, key.tenant)
    if memory.keys.any_active():
        raise Unauthorized(
            "this server needs an API key: send 'Authorization: Bearer <key>' "
            "(an admin creates one with: linkmem keys create --tenant user:<id>)"
        )
    return Caller(None, "admin", None)


def resolve_request_caller(
    memory: Memory, authorization: str | None, host_header: str | None
) -> Caller:
    """The caller of one HTTP request (REST or MCP). An open store (no keys) answers only
    requests addressed to a loopback name: a browser page that rebinds its own domain to
    127.0.0.1 sends that domain as the Host, and is refused."""
    caller = resolve_caller(memory, secret_from_header(authorization))
    host = urlsplit(f"//{host_header or ''}").hostname or ""
    if caller.key is None and not is_loopback(host):
        raise PermissionDenied(
            "this server has no API keys, so it answers only requests to 127.0.0.1 or "
            "localhost; create a key (linkmem keys create) to serve other addresses"
        )
    return caller


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_listen_address(memory: Memory, host: str) -> str:
    """Refuse to serve an open store (no API key) beyond loopback; return what to tell the
    operator at start."""
    if memory.keys.any_active():
        return f"API keys required (listening on {host})"
    if not is_loopback(host):
        raise ConfigError(
            f"refusing to listen on {host} without API keys: anyone who can reach it could "
            "read and delete every memory. Create a key first (linkmem keys create --role "
            "admin), or listen on 127.0.0.1"
        )
    return (
        f"no API keys exist, so the server is open to every local process; it listens on "
        f"{host} only. Create keys with: linkmem keys create --tenant user:<id>"
    )
