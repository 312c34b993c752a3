"""API keys: who may call a linkmem server, bound to which tenant, with which role.

A key is a secret (``lmk_`` and 43 URL-safe characters) shown once, when it is created; the
store keeps only its SHA-256 digest, its first characters (``prefix``, to tell keys apart in a
listing) and what it grants. A ``read`` or ``write`` key is bound to one ``Tenant`` and
reaches only that tenant's scopes; an ``admin`` key takes no tenant and reaches every scope
and the whole-store calls. Revoking a key is permanent (create a new one instead).

Keys live in the store next to the memories of a collection, so a CLI that creates or revokes
a key is seen at once by a server running on the same store. They are not exported, restored
or reset: resetting the data does not lock its admin out.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from linkmem.errors import InvalidInput, NotFound, Unauthorized
from linkmem.store.base import ApiKeyRow
from linkmem.tenancy import Tenant
from linkmem.validation import check_storable, shown, validate_name

if TYPE_CHECKING:
    from linkmem.store.base import Store

#: Roles, weakest first: ``read`` searches and reads, ``write`` also adds, updates and
#: deletes, ``admin`` reaches every scope and the whole-store calls.
ROLES = ("read", "write", "admin")
#: Every secret starts with this; the rest is ``secrets.token_urlsafe(32)``.
SECRET_PREFIX = "lmk_"
#: Characters of the secret kept in the store to tell keys apart ("lmk_AbCd").
PREFIX_CHARS = 8
_SECRET = re.compile(r"lmk_[A-Za-z0-9_-]{43}")
_TENANT_FORMS = "user:ID, agent:ID or user:ID,agent:ID (for example user:alice)"
_CREATE = "create one with `linkmem keys create`"


@dataclass(frozen=True)
class ApiKey:
    """What a key grants, without its secret."""

    id: str
    name: str | None
    role: str
    tenant: Tenant | None
    created_at: str
    revoked_at: str | None
    prefix: str

    @property
    def can_write(self) -> bool:
        return self.role in ("write", "admin")

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for listings and responses: never the secret or its hash."""
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "tenant": format_tenant(self.tenant),
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "prefix": self.prefix,
        }

    @classmethod
    def from_row(cls, row: ApiKeyRow) -> ApiKey:
        tenant = None
        if row.user_id or row.agent_id:
            tenant = Tenant(user_id=row.user_id or None, agent_id=row.agent_id or None)
        return cls(row.id, row.name, row.role, tenant, row.created_at, row.revoked_at, row.prefix)


def parse_tenant(spec: str | Tenant | None) -> Tenant | None:
    """``"user:alice"``, ``"agent:coach"`` or ``"user:alice,agent:coach"`` as a ``Tenant``;
    None or "" is no tenant. Anything else raises ``InvalidInput`` naming the accepted forms."""
    if spec is None or isinstance(spec, Tenant):
        return spec
    if not isinstance(spec, str):
        raise InvalidInput(
            f"a tenant is a string such as {_TENANT_FORMS}, got {type(spec).__name__}"
        )
    if not spec.strip():
        return None
    ids: dict[str, str] = {}
    for part in spec.split(","):
        kind, sep, value = part.strip().partition(":")
        kind = kind.strip().lower()
        if not sep or kind not in ("user", "agent") or not value.strip():
            raise InvalidInput(f"tenant {shown(spec)} is not valid: write it as {_TENANT_FORMS}")
        if kind in ids:
            raise InvalidInput(f"tenant {shown(spec)} names {kind} twice: write {_TENANT_FORMS}")
        ids[kind] = value.strip()
    try:
        return Tenant(user_id=ids.get("user"), agent_id=ids.get("agent"))
    except InvalidInput as e:
        raise InvalidInput(f"tenant {shown(spec)}: {e}; write it as {_TENANT_FORMS}") from e


def format_tenant(tenant: Tenant | None) -> str | None:
    """The ``parse_tenant`` form of ``tenant`` ("user:alice,agent:coach"); None for None."""
    if tenant is None:
        return None
    parts = [f"user:{tenant.user_id}"] if tenant.user_id else []
    parts += [f"agent:{tenant.agent_id}"] if tenant.agent_id else []
    return ",".join(parts)


def hash_secret(secret: str) -> str:
    """The SHA-256 hex digest the store keeps instead of the secret."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class KeyRing:
    """The API keys of one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create(
        self, tenant: str | Tenant | None, role: str = "write", name: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new key and its secret; the secret is not kept and cannot be shown again.
        ``read`` and ``write`` keys need a tenant; ``admin`` keys take none."""
        role = _check_role(role)
        bound = parse_tenant(tenant)
        if role == "admin" and bound is not None:
            raise InvalidInput(
                f"an admin key reaches every scope and takes no tenant ({format_tenant(bound)} "
                "given); leave --tenant out, or pass --role write or read for a key bound "
                "to that tenant"
            )
        if role != "admin" and bound is None:
            raise InvalidInput(
                f"a {role} key is bound to one tenant: pass --tenant user:ID or agent:ID, "
                "or --role admin for a key that reaches every scope"
            )
        name = _check_name(name)
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        row = ApiKeyRow(
            id="key_" + secrets.token_hex(6),
            key_hash=hash_secret(secret),
            name=name,
            role=role,
            user_id=bound.user_id if bound else None,
            agent_id=bound.agent_id if bound else None,
            created_at=_now(),
            revoked_at=None,
            prefix=secret[:PREFIX_CHARS],
        )
        self.store.put_api_key(row)
        return ApiKey.from_row(row), secret

    def list(self, include_revoked: bool = False) -> list[ApiKey]:
        """The keys, oldest first; revoked ones only with ``include_revoked``."""
        return [ApiKey.from_row(r) for r in self.store.api_keys(include_revoked)]

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key for good (revoking it again changes nothing); ``NotFound`` for an
        unknown id."""
        if not isinstance(key_id, str) or not key_id.strip():
            raise InvalidInput(
                f"a key id is a string such as key_0123456789ab, got {shown(key_id)}"
            )
        check_storable(key_id, "key id")
        row = self.store.revoke_api_key(key_id.strip(), _now())
        if row is None:
            raise NotFound(
                f"no API key with id {shown(key_id)}; `linkmem keys list --all` shows the ids"
            )
        return ApiKey.from_row(row)

    def authenticate(self, secret: str) -> ApiKey:
        """The active key whose secret this is; ``Unauthorized`` for a malformed, unknown or
        revoked secret (the message never repeats the secret)."""
        if not isinstance(secret, str) or not _SECRET.fullmatch(secret):
            raise Unauthorized(
                "the API key is malformed: a linkmem key is lmk_ followed by 43 letters, "
                "digits, - or _; send it as `Authorization: Bearer <key>`, or " + _CREATE
            )
        row = self.store.api_key_by_hash(hash_secret(secret))
        if row is None:
            raise Unauthorized(f"unknown API key; check the key you sent, or {_CREATE}")
        if row.revoked_at is not None:
            raise Unauthorized(
                f"API key {row.id} was revoked at {row.revoked_at}; {_CREATE} to replace it"
            )
        return ApiKey.from_row(row)

    def any_active(self) -> bool:
        """Whether at least one key is not revoked (a server with none may refuse to start)."""
        return self.store.has_active_api_keys()


def _check_role(role: Any) -> str:
    if role not in ROLES:
        raise InvalidInput(f"role {shown(role)} is not a key role; use one of {', '.join(ROLES)}")
    return role


def _check_name(name: Any) -> str | None:
    if name is None:
        return None
    return validate_name(name, "key name").strip() or None


def _now() -> str:
    return datetime.now(UTC).isoformat()
