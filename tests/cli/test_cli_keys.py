"""``linkmem keys``: create (the secret shown once), list, revoke, and clear refusals."""

from __future__ import annotations

import re

from cli_helpers import data, run

from linkmem import Memory

SECRET = re.compile(r"lmk_[A-Za-z0-9_-]{43}")


def test_create_prints_the_secret_once_with_how_to_send_it():
    out = run("keys", "create", "--tenant", "user:alice", "--name", "laptop").stdout
    secrets = SECRET.findall(out)
    assert len(secrets) == 1
    assert "shown only now" in out
    assert "Authorization: Bearer" in out and "LINKMEM_API_KEY" in out
    assert "write" in out and "user:alice" in out and "laptop" in out
    with Memory() as memory:
        assert memory.keys.authenticate(secrets[0]).name == "laptop"


def test_create_json_parses_and_the_secret_authenticates():
    made = data("keys", "create", "-t", "user:alice,agent:coach", "--role", "read")
    assert set(made) == {"key", "secret"} and SECRET.fullmatch(made["secret"])
    key = made["key"]
    assert (key["role"], key["tenant"], key["name"], key["revoked_at"]) == (
        "read",
        "user:alice,agent:coach",
        None,
        None,
    )
    assert key["prefix"] == made["secret"][:8]
    with Memory() as memory:
        assert memory.keys.authenticate(made["secret"]).to_dict() == key


def test_admin_keys_take_no_tenant():
    admin = data("keys", "create", "--role", "admin", "--name", "ops")["key"]
    assert (admin["role"], admin["tenant"]) == ("admin", None)
    result = run("keys", "create", "--role", "admin", "--tenant", "user:alice", code=1)
    assert "takes no tenant" in result.stderr


def test_list_shows_keys_without_secrets_and_revoked_ones_with_all():
    first = data("keys", "create", "--tenant", "user:alice", "--name", "laptop")
    second = data("keys", "create", "--tenant", "agent:coach")
    listed = data("keys", "list")["results"]
    assert [k["id"] for k in listed] == [first["key"]["id"], second["key"]["id"]]
    assert listed[0] == first["key"]
    table = run("keys", "list").stdout
    assert first["key"]["id"] in table and "laptop" in table and first["key"]["prefix"] in table
    assert first["secret"] not in table and second["secret"] not in table

    revoked = data("keys", "revoke", first["key"]["id"])["key"]
    assert revoked["id"] == first["key"]["id"] and revoked["revoked_at"]
    assert [k["id"] for k in data("keys", "list")["results"]] == [second["key"]["id"]]
    every = data("keys", "list", "--all")["results"]
    assert [k["revoked_at"] is not None for k in every] == [True, False]
    assert "revoked" in run("keys", "list", "--all").stdout
    assert first["key"]["id"] not in run("keys", "list").stdout


def test_revoke_prints_what_it_revoked_and_refuses_unknown_ids():
    key = data("keys", "create", "--tenant", "user:alice")["key"]
    out = run("keys", "revoke", key["id"]).stdout
    assert out.startswith(f"Revoked API key {key['id']}")
    again = data("keys", "revoke", key["id"])["key"]  # revoking twice is fine
    assert again["revoked_at"] and again["id"] == key["id"]
    result = run("keys", "revoke", "key_000000000000", code=1)
    assert "no API key with id 'key_000000000000'" in result.stderr
    assert "keys list --all" in result.stderr


def test_an_empty_listing_says_how_to_create_a_key():
    assert data("keys", "list") == {"results": []}
    assert "linkmem keys create" in run("keys", "list").stdout


def test_bad_tenants_and_missing_tenants_exit_1_with_a_clear_message():
    for tenant in ("alice", "team:alice", "user:a b", "user:alice,user:bob"):
        result = run("keys", "create", "--tenant", tenant, code=1)
        assert result.stderr.startswith("Error: tenant ")
        assert "user:ID, agent:ID or user:ID,agent:ID" in result.stderr
        assert result.stdout == ""
    result = run("keys", "create", code=1)
    assert "pass --tenant user:ID or agent:ID, or --role admin" in result.stderr
    assert data("keys", "list", "--all") == {"results": []}


def test_an_unknown_role_is_a_usage_error():
    result = run("keys", "create", "--tenant", "user:alice", "--role", "owner", code=2)
    assert "read" in result.stderr and "admin" in result.stderr
