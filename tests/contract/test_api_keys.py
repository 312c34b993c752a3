"""Contract: API keys are created, listed, revoked and checked alike on every backend; the
store keeps only their hashes, and neither export nor reset touches them."""

from __future__ import annotations

import io
import json
import re

import pytest

from linkmem import InvalidInput, NotFound, Tenant
from linkmem.errors import Unauthorized
from linkmem.keys import ROLES, ApiKey, format_tenant, hash_secret, parse_tenant

#: The key ring is the embedded store's (a remote client reaches keys through the server).
pytestmark = pytest.mark.embedded

SECRET = re.compile(r"lmk_[A-Za-z0-9_-]{43}")


def keys_table(memory) -> str:
    store = memory.store
    return f"{store.c}_api_keys" if hasattr(store, "c") else f'"{store.t.c}_api_keys"'


def raw_key_rows(memory) -> list[tuple]:
    return memory.store.db.rows(f"SELECT * FROM {keys_table(memory)}")


def collection(memory) -> str:
    store = memory.store
    return store.c if hasattr(store, "c") else store.t.c


def migrations(memory) -> list[str]:
    rows = memory.store.db.rows("SELECT name, collection FROM linkmem_migrations")
    return sorted(name for name, c in rows if c == collection(memory))


# create and authenticate ----------------------------------------------------------------------
def test_a_created_key_authenticates_with_its_tenant_and_role(memory):
    key, secret = memory.keys.create("user:alice", name="laptop")
    assert SECRET.fullmatch(secret) and key.prefix == secret[:8]
    assert key.id.startswith("key_") and len(key.id) == 16
    assert (key.role, key.name, key.tenant, key.revoked_at) == (
        "write",
        "laptop",
        Tenant(user_id="alice"),
        None,
    )
    assert key.can_write and not key.is_admin
    found = memory.keys.authenticate(secret)
    assert found == key
    assert found.to_dict() == {
        "id": key.id,
        "name": "laptop",
        "role": "write",
        "tenant": "user:alice",
        "created_at": key.created_at,
        "revoked_at": None,
        "prefix": secret[:8],
    }


def test_roles_and_tenants_round_trip(memory):
    read, _ = memory.keys.create("agent:coach", role="read")
    both, secret = memory.keys.create(Tenant(user_id="alice", agent_id="coach"))
    admin, admin_secret = memory.keys.create(None, role="admin", name="ops")
    assert not read.can_write and not read.is_admin
    assert read.to_dict()["tenant"] == "agent:coach"
    assert memory.keys.authenticate(secret).to_dict()["tenant"] == "user:alice,agent:coach"
    assert admin.tenant is None and admin.is_admin and admin.can_write
    assert memory.keys.authenticate(admin_secret) == admin


def test_the_store_keeps_the_hash_never_the_secret(memory):
    key, secret = memory.keys.create("user:alice")
    rows = raw_key_rows(memory)
    assert len(rows) == 1
    cells = [str(cell) for cell in rows[0]]
    assert hash_secret(secret) in cells
    assert not any(secret in cell for cell in cells)
    assert not any(secret[8:] in cell for cell in cells)  # not even the part after the prefix
    assert "key_hash" not in key.to_dict() and secret not in json.dumps(key.to_dict())


def test_secrets_and_ids_are_unique(memory):
    made = [memory.keys.create("user:alice") for _ in range(20)]
    assert len({k.id for k, _ in made}) == len({s for _, s in made}) == 20


# list and revoke ------------------------------------------------------------------------------
def test_list_is_oldest_first_and_hides_revoked_keys_unless_asked(memory):
    first, _ = memory.keys.create("user:alice", name="first")
    second, second_secret = memory.keys.create("user:bob", name="second")
    third, _ = memory.keys.create(None, role="admin", name="third")
    assert [k.id for k in memory.keys.list()] == [first.id, second.id, third.id]
    revoked = memory.keys.revoke(second.id)
    assert revoked.revoked_at is not None and revoked.id == second.id
    assert [k.id for k in memory.keys.list()] == [first.id, third.id]
    listed = memory.keys.list(include_revoked=True)
    assert [k.id for k in listed] == [first.id, second.id, third.id]
    assert listed[1] == revoked
    with pytest.raises(Unauthorized, match="revoked") as caught:
        memory.keys.authenticate(second_secret)
    assert second_secret not in str(caught.value)


def test_revoking_twice_keeps_the_first_time(memory):
    key, _ = memory.keys.create("user:alice")
    once = memory.keys.revoke(key.id)
    assert memory.keys.revoke(key.id) == once


def test_revoking_an_unknown_key_is_not_found(memory):
    with pytest.raises(NotFound, match="key_000000000000"):
        memory.keys.revoke("key_000000000000")


@pytest.mark.parametrize(
    "secret",
    [
        "",
        "Bearer x",
        "lmk_short",
        "lmk_" + "a" * 42 + "!",
        "lmk_" + "a" * 43 + "\n",
        "xyz_" + "a" * 43,
        None,
        12,
    ],
)
def test_malformed_secrets_are_unauthorized(memory, secret):
    memory.keys.create("user:alice")
    with pytest.raises(Unauthorized, match="malformed") as caught:
        memory.keys.authenticate(secret)
    if secret:
        assert str(secret).strip() not in str(caught.value)


def test_an_unknown_secret_is_unauthorized_without_echoing_it(memory):
    _, secret = memory.keys.create("user:alice")
    forged = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    with pytest.raises(Unauthorized, match="unknown API key") as caught:
        memory.keys.authenticate(forged)
    assert forged not in str(caught.value) and forged[8:] not in str(caught.value)


def test_any_active(memory):
    assert not memory.keys.any_active()
    key, _ = memory.keys.create("user:alice")
    assert memory.keys.any_active()
    memory.keys.revoke(key.id)
    assert not memory.keys.any_active()


# validation: nothing is written ---------------------------------------------------------------
@pytest.mark.parametrize(
    "tenant",
    [
        "alice",
        "user:",
        ":alice",
        "team:alice",
        "user:alice,user:bob",
        "user:alice,",
        "user:a b",
        "user:*",
        42,
    ],
)
def test_bad_tenants_are_refused_and_say_the_accepted_forms(memory, tenant):
    with pytest.raises(InvalidInput, match=r"user:ID, agent:ID or user:ID,agent:ID"):
        memory.keys.create(tenant)
    assert raw_key_rows(memory) == []


@pytest.mark.parametrize(
    ("tenant", "role", "match"),
    [
        (None, "write", r"pass --tenant user:ID or agent:ID, or --role admin"),
        ("", "read", r"pass --tenant user:ID or agent:ID, or --role admin"),
        ("user:alice", "admin", "takes no tenant"),
        ("user:alice", "owner", "read, write, admin"),
        ("user:alice", None, "read, write, admin"),
    ],
)
def test_bad_roles_and_missing_tenants_are_refused(memory, tenant, role, match):
    with pytest.raises(InvalidInput, match=match):
        memory.keys.create(tenant, role=role)
    assert raw_key_rows(memory) == [] and not memory.keys.any_active()


@pytest.mark.parametrize("name", ["x" * 201, "bad\x00name", 7])
def test_bad_names_are_refused(memory, name):
    with pytest.raises(InvalidInput, match="key name"):
        memory.keys.create("user:alice", name=name)
    assert raw_key_rows(memory) == []


def test_parse_and_format_tenant():
    assert parse_tenant(None) is None and parse_tenant("") is None and parse_tenant("  ") is None
    assert parse_tenant("user:alice") == Tenant(user_id="alice")
    assert parse_tenant(" agent:coach , user:alice ") == Tenant("alice", "coach")
    assert parse_tenant("user:team:a") == Tenant(user_id="team:a")
    tenant = Tenant("alice", "coach")
    assert parse_tenant(tenant) is tenant
    assert format_tenant(tenant) == "user:alice,agent:coach"
    assert format_tenant(Tenant(agent_id="coach")) == "agent:coach"
    assert format_tenant(None) is None
    assert parse_tenant(format_tenant(tenant)) == tenant
    assert ROLES == ("read", "write", "admin")


# keys and the rest of the store ---------------------------------------------------------------
def test_keys_survive_reset(memory):
    memory.add("Max is a dog", user_id="alice")
    key, secret = memory.keys.create(None, role="admin")
    memory.reset()
    assert memory.get_all(user_id="alice")["results"] == []
    assert memory.keys.authenticate(secret) == key
    assert memory.check()["ok"]


def test_keys_are_not_exported_or_restored(make_memory):
    memory = make_memory()
    memory.add("Max is a dog", user_id="alice")
    _, secret = memory.keys.create("user:alice", name="exported?")
    out = io.StringIO()
    memory.export(out)
    text = out.getvalue()
    assert secret not in text and hash_secret(secret) not in text
    assert "exported?" not in text and secret[:8] not in text
    assert {json.loads(line)["type"] for line in text.splitlines()} <= {
        "header",
        "memory",
        "entity",
        "link",
        "history",
    }
    copy = make_memory(collection="keys_copy")
    copy.restore(io.StringIO(text))
    assert copy.get_all(user_id="alice")["results"]
    assert copy.keys.list(include_revoked=True) == []
    with pytest.raises(Unauthorized):
        copy.keys.authenticate(secret)


def test_keys_belong_to_their_collection(make_memory):
    first = make_memory()
    other = make_memory(collection="keys_other")
    _, secret = first.keys.create("user:alice")
    assert other.keys.list() == [] and not other.keys.any_active()
    with pytest.raises(Unauthorized):
        other.keys.authenticate(secret)


def test_the_audit_ignores_keys(memory):
    memory.add("Max is a dog", user_id="alice")
    memory.keys.create("user:alice")
    memory.keys.revoke(memory.keys.create(None, role="admin")[0].id)
    assert memory.check()["ok"]


def test_a_key_made_by_one_instance_works_in_another_at_once(make_memory):
    server, cli = make_memory(), make_memory()
    assert not server.keys.any_active()
    key, secret = cli.keys.create("user:alice", role="read")
    assert server.keys.any_active()
    assert server.keys.authenticate(secret) == key
    cli.keys.revoke(key.id)
    with pytest.raises(Unauthorized, match="revoked"):
        server.keys.authenticate(secret)
    assert [k.id for k in server.keys.list(include_revoked=True)] == [key.id]


def test_keys_are_kept_across_reopen(make_memory):
    key, secret = make_memory().keys.create("agent:coach", name="bot")
    assert make_memory().keys.authenticate(secret) == key


def test_api_key_from_row_keeps_what_the_store_holds(memory):
    key, secret = memory.keys.create("user:alice,agent:coach", role="read", name="n")
    row = memory.store.api_key_by_hash(hash_secret(secret))
    assert ApiKey.from_row(row) == key
    assert (row.user_id, row.agent_id, row.role, row.name) == ("alice", "coach", "read", "n")
    assert memory.store.api_key_by_hash(hash_secret("lmk_other")) is None
    assert memory.store.revoke_api_key("key_missing", "2030-01-01T00:00:00+00:00") is None


# migration ------------------------------------------------------------------------------------
def test_a_store_from_before_api_keys_gains_the_table_on_open(make_memory):
    """A store written by a linkmem without m002 (its table and migration record removed, as
    such a store has them) opens, migrates, keeps its memories and takes keys."""
    old = make_memory()
    kept = old.add("Max is a dog", user_id="alice")["results"][0]["id"]
    every = migrations(old)
    assert every[:2] == ["m001_initial", "m002_api_keys"]
    old.store.db.run(f"DROP TABLE {keys_table(old)}")
    # Only this collection's record: other tests' collections share the PostgreSQL database.
    old.store.db.run(
        f"DELETE FROM linkmem_migrations WHERE name = 'm002_api_keys' "
        f"AND collection = '{collection(old)}'"
    )
    assert migrations(old) == [name for name in every if name != "m002_api_keys"]
    old.close()

    upgraded = make_memory()
    assert migrations(upgraded) == every
    assert raw_key_rows(upgraded) == []
    assert upgraded.get(kept)["memory"] == "Max is a dog"
    key, secret = upgraded.keys.create("user:alice")
    assert upgraded.keys.authenticate(secret) == key
    assert upgraded.check()["ok"]
