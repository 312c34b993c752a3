"""Tenant isolation over real HTTP: a key of user:alice never reads, lists, searches, counts,
changes, deletes, exports, imports into or sees the entities or history of user:bob, on any
route; an agent key reaches only its agent; a read key cannot write; only admin keys reach
the whole-store routes; a request without a valid key is 401.

Every route of the app is listed in ``ATTACKS`` (or ``PUBLIC``), and
``test_every_route_is_covered`` fails when a route is added without an attack here. Each
attack ends by checking, with the admin key, that bob's data (and the other agent's) is
exactly as it was.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from http_checks import Route, assert_error, route_table

ALICE_TEXTS = ["Alice adopted Max in Lisbon", "Alice feeds Luna every morning"]
BOB_TEXTS = ["Bob walks Max in Paris", "Max chases Rex near the Seine"]
COACH_TEXT = "Coach plans the Sunday run with Carol"
OTHER_TEXT = "Other agent notes that Kim likes Tokyo"
#: Routes that answer without a key and reveal no memory.
PUBLIC: set[Route] = {
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    ("GET", "/v1/health"),
    ("GET", "/v1/ready"),
    ("GET", "/metrics"),
    ("GET", "/"),
    ("POST", "/configure"),
    ("GET", "/ui"),  # the explorer's files: the page asks for a key before it reads anything
    ("GET", "/ui/{path:path}"),
}


@dataclass
class World:
    """Alice's, bob's and two agents' memories, written with the admin key."""

    api: Any
    alice_ids: list[str] = field(default_factory=list)
    bob_ids: list[str] = field(default_factory=list)
    bob_deleted: str = ""
    coach_ids: list[str] = field(default_factory=list)
    other_ids: list[str] = field(default_factory=list)
    bob_entities: dict[str, str] = field(default_factory=dict)
    alice_entities: dict[str, str] = field(default_factory=dict)
    other_entities: dict[str, str] = field(default_factory=dict)
    before: dict[str, Any] = field(default_factory=dict)

    def add(self, text: str, **scope: Any) -> str:
        body = {"messages": text, **scope, "metadata": {"topic": "pets"}}
        return self.api.ok("POST", "/v1/memories", json=body)["results"][0]["id"]

    def entities(self, **scope: str) -> dict[str, str]:
        found = self.api.ok("GET", "/v1/entities", params=scope)["results"]
        return {e["entity"]: e["id"] for e in found}

    def protected(self) -> dict[str, Any]:
        """Everything of bob and of agent "other", as the admin sees it."""
        api = self.api
        snapshot: dict[str, Any] = {}
        for name, scope in (("bob", {"user_id": "bob"}), ("other", {"agent_id": "other"})):
            snapshot[name] = {
                "memories": api.ok("GET", "/v1/memories", params={**scope, "limit": 1000}),
                "count": api.ok("GET", "/v1/memories/count", params=scope),
                "entities": api.ok("GET", "/v1/entities", params=scope),
            }
        ids = [*self.bob_ids, self.bob_deleted, *self.other_ids]
        snapshot["history"] = {i: api.ok("GET", f"/v1/memories/{i}/history") for i in ids}
        snapshot["links"] = {
            i: api.ok("GET", f"/v1/memories/{i}/entities") for i in [*self.bob_ids, *self.other_ids]
        }
        return snapshot

    def assert_protected_unchanged(self) -> None:
        assert self.protected() == self.before

    def alice_view(self) -> set[str]:
        return {m["id"] for m in self.api.ok("GET", "/v1/memories", "alice")["results"]}


@pytest.fixture
def world(api: Any) -> World:
    w = World(api)
    w.alice_ids = [w.add(t, user_id="alice") for t in ALICE_TEXTS]
    w.bob_ids = [w.add(t, user_id="bob") for t in BOB_TEXTS]
    w.bob_deleted = w.add("Bob sold Rover", user_id="bob")
    api.ok("DELETE", f"/v1/memories/{w.bob_deleted}")
    w.coach_ids = [w.add(COACH_TEXT, user_id="carol", agent_id="coach")]
    w.other_ids = [w.add(OTHER_TEXT, user_id="carol", agent_id="other")]
    w.bob_entities = w.entities(user_id="bob")
    w.alice_entities = w.entities(user_id="alice")
    w.other_entities = w.entities(agent_id="other")
    assert {"Bob", "Max", "Paris"} <= set(w.bob_entities)
    assert "Max" in w.alice_entities and "Paris" not in w.alice_entities
    w.before = w.protected()
    return w


def random_id() -> str:
    return str(uuid.uuid4())


def normalised(response: httpx.Response, *ids: str) -> tuple[int, str, str, str]:
    """Status, content type, code and message with the id(s) asked for blanked out."""
    body = response.json()
    message = body["error"]["message"]
    for i in ids:
        message = message.replace(i, "<id>")
    return response.status_code, response.headers["content-type"], body["error"]["code"], message


def assert_no_oracle(
    w: World, method: str, template: str, bob_id: str, key: str = "alice", **kw: Any
) -> None:
    """A request naming bob's real id answers exactly like one naming an id that does not
    exist: 404, same code, same message (the id aside)."""
    fake = random_id()
    real = w.api.call(method, template.format(id=bob_id), key, **kw)
    missing = w.api.call(method, template.format(id=fake), key, **kw)
    assert_error(real, 404, "not_found")
    assert_error(missing, 404, "not_found")
    assert normalised(real, bob_id) == normalised(missing, fake)


def assert_no_entity_oracle(
    w: World, send: Callable[[str], httpx.Response], real: str, fake: str | None = None
) -> None:
    """Naming bob's entity (id or name) answers like naming one that does not exist."""
    fake = fake or random_id()
    got_real, got_fake = send(real), send(fake)
    assert_error(got_real, 404, "not_found")
    assert_error(got_fake, 404, "not_found")
    assert normalised(got_real, real) == normalised(got_fake, fake)


def forbidden(response: httpx.Response) -> None:
    assert_error(response, 403, "forbidden")


def ids_of(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    body = response.json()
    rows = body if isinstance(body, list) else body["results"]
    return {row["id"] for row in rows}


def jsonl(*rows: dict[str, Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# one attack per route ---------------------------------------------------------------------------
ATTACKS: dict[Route, Callable[[World], None]] = {}


def attack(method: str, path: str) -> Callable[[Callable[[World], None]], Callable[[World], None]]:
    def register(fn: Callable[[World], None]) -> Callable[[World], None]:
        ATTACKS[(method, path)] = fn
        return fn

    return register


@attack("POST", "/v1/memories")
def _add(w: World) -> None:
    for scope in ({"user_id": "bob"}, {"user_id": " bob "}, {"user_id": "bob", "agent_id": "x"}):
        forbidden(w.api.call("POST", "/v1/memories", "alice", json={"messages": "hi", **scope}))
    smuggled = {"messages": "hi", "metadata": {"user_id": "bob"}}
    assert_error(w.api.call("POST", "/v1/memories", "alice", json=smuggled), 400, "invalid_input")
    added = w.api.ok("POST", "/v1/memories", "alice", json={"messages": "Alice met Max"})
    assert [r["user_id"] for r in added["results"]] == ["alice"]


@attack("POST", "/v1/memories/batch")
def _add_batch(w: World) -> None:
    body = {"items": ["Max again", "and again"], "user_id": "bob"}
    forbidden(w.api.call("POST", "/v1/memories/batch", "alice", json=body))


@attack("POST", "/v1/memories/search")
def _search(w: World) -> None:
    def search(**body: Any) -> httpx.Response:
        return w.api.call("POST", "/v1/memories/search", "alice", json={"query": "Max", **body})

    forbidden(search(user_id="bob"))
    forbidden(search(filters={"user_id": "bob"}))
    forbidden(search(filters={"user_id": {"in": ["alice", "bob"]}}))
    forbidden(search(user_id="alice", filters={"user_id": "bob"}))
    assert ids_of(search(filters={"OR": [{"user_id": "bob"}, {"topic": "pets"}]})) <= set(
        w.alice_ids
    )
    for query in ("Max", "Bob walks Max in Paris", "Paris", "Rex Seine"):
        found = ids_of(search(query=query, top_k=50))
        assert found <= set(w.alice_ids), query
    assert ids_of(search(query="Max")) & set(w.alice_ids)  # the entity hop stays in alice's scope
    hops = search(query="Max", explain=True, signals={"dense": False, "keyword": False})
    assert ids_of(hops) <= set(w.alice_ids)


@attack("GET", "/v1/memories")
def _list(w: World) -> None:
    def listing(**params: Any) -> httpx.Response:
        return w.api.call("GET", "/v1/memories", "alice", params=params)

    forbidden(listing(user_id="bob"))
    forbidden(listing(filters=json.dumps({"user_id": "bob"})))
    forbidden(listing(user_id="alice", filters=json.dumps({"user_id": "bob"})))
    assert ids_of(listing()) == set(w.alice_ids)
    assert ids_of(listing(agent_id="coach")) == set()  # narrowing stays inside alice
    either = json.dumps({"OR": [{"user_id": "bob"}, {"topic": "pets"}]})
    assert ids_of(listing(filters=either)) == set(w.alice_ids)


@attack("DELETE", "/v1/memories")
def _delete_all(w: World) -> None:
    for params in ({"user_id": "bob"}, {"user_id": "bob", "across_users": "true"}):
        forbidden(w.api.call("DELETE", "/v1/memories", "alice", params=params))
    w.api.ok("DELETE", "/v1/memories", "alice", params={"across_users": "true"})
    assert w.alice_view() == set()


@attack("GET", "/v1/memories/count")
def _count(w: World) -> None:
    forbidden(w.api.call("GET", "/v1/memories/count", "alice", params={"user_id": "bob"}))
    forbidden(
        w.api.call("GET", "/v1/memories/count", "alice", params={"agent_id": "x", "user_id": "b"})
    )
    assert w.api.ok("GET", "/v1/memories/count", "alice") == {"count": len(w.alice_ids)}


@attack("GET", "/v1/memories/{memory_id}")
def _get(w: World) -> None:
    for bob_id in w.bob_ids:
        assert_no_oracle(w, "GET", "/v1/memories/{id}", bob_id)
    assert_no_oracle(w, "GET", "/v1/memories/{id}", w.bob_deleted)
    get = w.api.call("GET", f"/v1/memories/{w.bob_ids[0]}", "alice", params={"user_id": "bob"})
    forbidden(get)
    assert w.api.ok("GET", f"/v1/memories/{w.alice_ids[0]}", "alice")["user_id"] == "alice"


@attack("PATCH", "/v1/memories/{memory_id}")
def _update(w: World) -> None:
    for body in ({"text": "Hacked by Alice"}, {"metadata": {"topic": "stolen"}}):
        assert_no_oracle(w, "PATCH", "/v1/memories/{id}", w.bob_ids[0], json=body)
    body = {"text": "Hacked", "user_id": "bob"}
    forbidden(w.api.call("PATCH", f"/v1/memories/{w.bob_ids[0]}", "alice", json=body))


@attack("DELETE", "/v1/memories/{memory_id}")
def _delete(w: World) -> None:
    assert_no_oracle(w, "DELETE", "/v1/memories/{id}", w.bob_ids[0])
    params = {"user_id": "bob"}
    forbidden(w.api.call("DELETE", f"/v1/memories/{w.bob_ids[0]}", "alice", params=params))


@attack("GET", "/v1/memories/{memory_id}/history")
def _history(w: World) -> None:
    assert_no_oracle(w, "GET", "/v1/memories/{id}/history", w.bob_ids[0])
    assert_no_oracle(w, "GET", "/v1/memories/{id}/history", w.bob_deleted)
    own = w.api.ok("GET", f"/v1/memories/{w.alice_ids[0]}/history", "alice")["results"]
    assert [e["event"] for e in own] == ["ADD"]


@attack("GET", "/v1/memories/{memory_id}/entities")
def _memory_entities(w: World) -> None:
    assert_no_oracle(w, "GET", "/v1/memories/{id}/entities", w.bob_ids[0])
    assert_no_oracle(w, "GET", "/v1/memories/{id}/entities", w.bob_deleted)


@attack("GET", "/v1/entities")
def _entities(w: World) -> None:
    forbidden(w.api.call("GET", "/v1/entities", "alice", params={"user_id": "bob"}))
    assert ids_of(w.api.call("GET", "/v1/entities", "alice")) == set(w.alice_entities.values())


@attack("POST", "/v1/entities/merge")
def _merge(w: World) -> None:
    bob = w.bob_entities

    def merge(keep: str, drop: str, **scope: str) -> httpx.Response:
        body = {"keep": keep, "drop": drop, **scope}
        return w.api.call("POST", "/v1/entities/merge", "alice", json=body)

    assert_no_entity_oracle(w, lambda e: merge(e, bob["Paris"]), bob["Max"])
    assert_no_entity_oracle(w, lambda e: merge(w.alice_entities["Max"], e), bob["Paris"])
    assert_no_entity_oracle(w, lambda e: merge(w.alice_entities["Max"], e), "Paris", "Nowhere")
    forbidden(merge(bob["Max"], bob["Paris"], user_id="bob"))


@attack("POST", "/v1/entities/rename")
def _rename(w: World) -> None:
    def rename(entity: str, **scope: str) -> httpx.Response:
        body = {"entity": entity, "new_name": "Stolen", **scope}
        return w.api.call("POST", "/v1/entities/rename", "alice", json=body)

    assert_no_entity_oracle(w, rename, w.bob_entities["Max"])
    assert_no_entity_oracle(w, rename, w.bob_entities["Bob"])
    assert_no_entity_oracle(w, rename, "Paris", "Nowhere")
    forbidden(rename("Max", user_id="bob"))


@attack("GET", "/v1/entities/memories")
def _entity_memories(w: World) -> None:
    def memories(entity: str, **scope: str) -> httpx.Response:
        params = {"entity": entity, **scope}
        return w.api.call("GET", "/v1/entities/memories", "alice", params=params)

    assert_no_entity_oracle(w, memories, w.bob_entities["Max"])
    assert_no_entity_oracle(w, memories, "Paris", "Nowhere")
    forbidden(memories("Max", user_id="bob"))
    hop = memories("Max")
    assert ids_of(hop) == {w.alice_ids[0]}
    assert hop.json()["entity"]["id"] == w.alice_entities["Max"]


@attack("GET", "/v1/entities/related")
def _related(w: World) -> None:
    def related(entity: str, **scope: str) -> httpx.Response:
        return w.api.call(
            "GET", "/v1/entities/related", "alice", params={"entity": entity, **scope}
        )

    assert_no_entity_oracle(w, related, w.bob_entities["Max"])
    assert_no_entity_oracle(w, related, "Paris", "Nowhere")
    forbidden(related("Max", user_id="bob"))
    names = {e["entity"] for e in related("Max").json()["results"]}
    assert names and names <= set(w.alice_entities) and "Paris" not in names


@attack("POST", "/v1/keys")
def _create_key(w: World) -> None:
    for tenant, role in (("user:bob", "write"), (None, "admin"), ("user:alice", "write")):
        body = {"tenant": tenant, "role": role}
        forbidden(w.api.call("POST", "/v1/keys", "alice", json=body))


@attack("GET", "/v1/keys")
def _list_keys(w: World) -> None:
    forbidden(w.api.call("GET", "/v1/keys", "alice"))


@attack("DELETE", "/v1/keys/{key_id}")
def _revoke_key(w: World) -> None:
    key_id, secret = w.api.new_key("user:bob", "write")
    forbidden(w.api.call("DELETE", f"/v1/keys/{key_id}", "alice"))
    still = w.api.call(
        "GET", "/v1/memories/count", None, headers={"Authorization": f"Bearer {secret}"}
    )
    assert still.status_code == 200 and still.json() == {"count": len(w.bob_ids)}


@attack("POST", "/v1/reset")
def _reset(w: World) -> None:
    forbidden(w.api.call("POST", "/v1/reset", "alice"))


@attack("POST", "/v1/check")
def _check(w: World) -> None:
    forbidden(w.api.call("POST", "/v1/check", "alice", params={"repair": "true"}))


@attack("GET", "/v1/status")
def _status(w: World) -> None:
    forbidden(w.api.call("GET", "/v1/status", "alice"))


@attack("GET", "/v1/whoami")
def _whoami(w: World) -> None:
    for params in ({}, {"user_id": "bob"}):
        me = w.api.ok("GET", "/v1/whoami", "alice", params=params)
        assert (me["role"], me["tenant"], me["user_id"]) == ("write", "user:alice", "alice")


@attack("GET", "/v1/weights")
def _weights(w: World) -> None:
    weights = w.api.ok("GET", "/v1/weights", "alice", params={"user_id": "bob"})
    # numbers of the config, no memory
    assert set(weights) == {"cosine_scale", "dense", "bm25", "max_score"}


@attack("GET", "/v1/export")
def _export(w: World) -> None:
    response = w.api.call("GET", "/v1/export", "alice")
    forbidden(response)
    assert "Bob" not in response.text


@attack("POST", "/v1/restore")
def _restore(w: World) -> None:
    export = w.api.call("GET", "/v1/export").content
    forbidden(w.api.call("POST", "/v1/restore", "alice", content=export))


@attack("POST", "/v1/import")
def _import(w: World) -> None:
    def upload(data: bytes, **params: str) -> httpx.Response:
        return w.api.call("POST", "/v1/import", "alice", content=data, params=params)

    forbidden(upload(jsonl({"text": "Max was here", "user_id": "bob"})))
    mixed = jsonl({"text": "Alice line"}, {"text": "Bob line", "user_id": "bob"})
    forbidden(upload(mixed))
    forbidden(upload(jsonl({"text": "Max was here"}), user_id="bob"))
    document = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "user_id": "bob"})
    forbidden(upload(document.encode()))
    assert w.alice_view() == set(w.alice_ids)  # nothing of the refused files was written
    done = w.api.ok("POST", "/v1/import", "alice", content=jsonl({"text": "Alice imported"}))
    assert done["scopes"] == [{"user_id": "alice", "memories": 1}]


@attack("POST", "/memories")
def _mem0_add(w: World) -> None:
    messages = [{"role": "user", "content": "I am Bob now"}]
    for scope in ({"user_id": "bob"}, {"user_id": "bob", "run_id": "r1"}):
        forbidden(w.api.call("POST", "/memories", "alice", json={"messages": messages, **scope}))
    added = w.api.ok("POST", "/memories", "alice", json={"messages": messages})
    assert {r["user_id"] for r in added["results"]} == {"alice"}


@attack("GET", "/memories")
def _mem0_list(w: World) -> None:
    forbidden(w.api.call("GET", "/memories", "alice", params={"user_id": "bob"}))
    assert ids_of(w.api.call("GET", "/memories", "alice")) == set(w.alice_ids)


@attack("GET", "/memories/{memory_id}")
def _mem0_get(w: World) -> None:
    assert_no_oracle(w, "GET", "/memories/{id}", w.bob_ids[0])


@attack("POST", "/search")
def _mem0_search(w: World) -> None:
    def search(**body: Any) -> httpx.Response:
        return w.api.call("POST", "/search", "alice", json={"query": "Max", **body})

    forbidden(search(user_id="bob"))
    forbidden(search(filters={"user_id": "bob"}))
    forbidden(search(filters={"user_id": "bob", "topic": "pets"}))
    for query in ("Max", "Bob walks Max in Paris", "Paris"):
        assert ids_of(search(query=query, limit=50)) <= set(w.alice_ids)


@attack("PUT", "/memories/{memory_id}")
def _mem0_update(w: World) -> None:
    for body in ({"text": "Hacked"}, {"data": "Hacked"}, {"metadata": {"x": 1}}):
        assert_no_oracle(w, "PUT", "/memories/{id}", w.bob_ids[0], json=body)


@attack("GET", "/memories/{memory_id}/history")
def _mem0_history(w: World) -> None:
    assert_no_oracle(w, "GET", "/memories/{id}/history", w.bob_ids[0])
    assert_no_oracle(w, "GET", "/memories/{id}/history", w.bob_deleted)


@attack("DELETE", "/memories/{memory_id}")
def _mem0_delete(w: World) -> None:
    assert_no_oracle(w, "DELETE", "/memories/{id}", w.bob_ids[0])
    assert w.api.ok("GET", f"/memories/{w.bob_ids[0]}")["memory"] == BOB_TEXTS[0]


@attack("DELETE", "/memories")
def _mem0_delete_all(w: World) -> None:
    forbidden(w.api.call("DELETE", "/memories", "alice", params={"user_id": "bob"}))
    forbidden(w.api.call("DELETE", "/memories", "alice", params={"run_id": "r", "user_id": "bob"}))


@attack("POST", "/reset")
def _mem0_reset(w: World) -> None:
    forbidden(w.api.call("POST", "/reset", "alice"))


def _public_reveals_nothing(w: World, method: str, path: str) -> None:
    response = w.api.call(method, path, None, follow_redirects=False)
    assert response.status_code in (200, 307, 410), (path, response.text)
    for secret in [*BOB_TEXTS, *w.bob_ids, *w.bob_entities.values()]:
        assert secret not in response.text, (path, secret)


# the tests ---------------------------------------------------------------------------------------
def test_every_route_is_covered(keyed_server: Any):
    routes = route_table(keyed_server.memory)
    assert routes - set(ATTACKS) - PUBLIC == set(), "routes with no tenant attack here"
    assert (set(ATTACKS) | PUBLIC) - routes == set(), "attacks on routes that no longer exist"


@pytest.mark.parametrize("route", sorted(ATTACKS), ids=" ".join)
def test_alice_cannot_reach_bob(world: World, route: Route):
    ATTACKS[route](world)
    world.assert_protected_unchanged()


@pytest.mark.parametrize("route", sorted(PUBLIC), ids=" ".join)
def test_public_routes_reveal_no_memory(world: World, route: Route):
    _public_reveals_nothing(world, *route)


def test_an_agent_key_reaches_only_its_agent(world: World):
    api = world.api
    other = world.other_ids[0]
    assert ids_of(api.call("GET", "/v1/memories", "coach")) == set(world.coach_ids)
    assert ids_of(api.call("GET", "/memories", "coach")) == set(world.coach_ids)
    assert api.ok("GET", "/v1/memories/count", "coach") == {"count": 1}
    for params in ({"agent_id": "other"}, {"agent_id": "other", "user_id": "carol"}):
        forbidden(api.call("GET", "/v1/memories", "coach", params=params))
        forbidden(api.call("GET", "/v1/entities", "coach", params=params))
    forbidden(
        api.call("POST", "/v1/memories", "coach", json={"messages": "x", "agent_id": "other"})
    )
    forbidden(api.call("POST", "/search", "coach", json={"query": "Kim", "agent_id": "other"}))
    forbidden(
        api.call(
            "POST",
            "/v1/memories/search",
            "coach",
            json={"query": "Kim", "filters": {"agent_id": "other"}},
        )
    )
    for template in ("/v1/memories/{id}", "/v1/memories/{id}/history", "/memories/{id}"):
        assert_no_oracle(world, "GET", template, other, key="coach")
    assert_no_oracle(world, "DELETE", "/v1/memories/{id}", other, key="coach")
    assert_no_oracle(world, "PATCH", "/v1/memories/{id}", other, key="coach", json={"text": "x"})
    for query in ("Kim", "Tokyo", OTHER_TEXT):
        body = {"query": query, "top_k": 50}
        assert ids_of(api.call("POST", "/v1/memories/search", "coach", json=body)) <= set(
            world.coach_ids
        )
    assert_no_entity_oracle(
        world,
        lambda e: api.call("GET", "/v1/entities/memories", "coach", params={"entity": e}),
        world.other_entities["Kim"],
    )
    # the agent's own scope spans its users: a user id narrows it, it never widens it
    assert ids_of(api.call("GET", "/v1/memories", "coach", params={"user_id": "carol"})) == set(
        world.coach_ids
    )
    assert ids_of(api.call("GET", "/v1/memories", "coach", params={"user_id": "bob"})) == set()
    api.ok("DELETE", "/v1/memories", "coach", params={"across_users": "true"})
    assert api.ok("GET", "/v1/memories/count", "coach") == {"count": 0}
    world.assert_protected_unchanged()
    assert world.alice_view() == set(world.alice_ids)


def _write_requests(w: World) -> list[tuple[str, str, dict[str, Any]]]:
    own = w.alice_ids[0]
    return [
        ("POST", "/v1/memories", {"json": {"messages": "Alice again"}}),
        ("POST", "/v1/memories/batch", {"json": {"items": ["a", "b"]}}),
        ("PATCH", f"/v1/memories/{own}", {"json": {"text": "changed"}}),
        ("DELETE", f"/v1/memories/{own}", {}),
        ("DELETE", "/v1/memories", {}),
        ("POST", "/v1/entities/merge", {"json": {"keep": "Alice", "drop": "Max"}}),
        ("POST", "/v1/entities/rename", {"json": {"entity": "Max", "new_name": "Maxine"}}),
        ("POST", "/v1/import", {"content": jsonl({"text": "imported"})}),
        ("POST", "/memories", {"json": {"messages": [{"role": "user", "content": "hi"}]}}),
        ("PUT", f"/memories/{own}", {"json": {"text": "changed"}}),
        ("DELETE", f"/memories/{own}", {}),
        ("DELETE", "/memories", {}),
    ]


def _alice_state(w: World) -> dict[str, Any]:
    api = w.api
    return {
        "memories": api.ok("GET", "/v1/memories", params={"user_id": "alice"}),
        "entities": api.ok("GET", "/v1/entities", params={"user_id": "alice"}),
        "history": [api.ok("GET", f"/v1/memories/{i}/history") for i in w.alice_ids],
    }


def test_a_read_key_cannot_write(world: World):
    before = _alice_state(world)
    for method, path, kw in _write_requests(world):
        message = assert_error(world.api.call(method, path, "alice_read", **kw), 403, "forbidden")
        assert "read" in message, (method, path, message)
    assert _alice_state(world) == before
    world.assert_protected_unchanged()


def test_a_read_key_reads_its_tenant(world: World):
    api, own = world.api, world.alice_ids[0]
    assert ids_of(api.call("GET", "/v1/memories", "alice_read")) == set(world.alice_ids)
    assert ids_of(api.call("GET", "/memories", "alice_read")) == set(world.alice_ids)
    assert api.ok("GET", "/v1/memories/count", "alice_read") == {"count": 2}
    assert api.ok("GET", f"/v1/memories/{own}", "alice_read")["id"] == own
    assert api.ok("GET", f"/memories/{own}", "alice_read")["id"] == own
    assert api.ok("GET", f"/v1/memories/{own}/history", "alice_read")["results"]
    assert api.ok("GET", f"/memories/{own}/history", "alice_read")
    assert api.ok("GET", f"/v1/memories/{own}/entities", "alice_read")["results"]
    found = api.call("POST", "/v1/memories/search", "alice_read", json={"query": "Max"})
    assert ids_of(found) and ids_of(found) <= set(world.alice_ids)
    assert ids_of(api.call("POST", "/search", "alice_read", json={"query": "Luna"}))
    assert ids_of(api.call("GET", "/v1/entities", "alice_read")) == set(
        world.alice_entities.values()
    )
    assert api.ok("GET", "/v1/entities/memories", "alice_read", params={"entity": "Max"})
    assert api.ok("GET", "/v1/entities/related", "alice_read", params={"entity": "Max"})
    forbidden(api.call("GET", "/v1/memories", "alice_read", params={"user_id": "bob"}))
    assert_no_oracle(world, "GET", "/v1/memories/{id}", world.bob_ids[0], key="alice_read")


ADMIN_ONLY = [
    ("GET", "/v1/keys", {}),
    ("POST", "/v1/keys", {"json": {"tenant": "user:alice", "role": "read"}}),
    ("DELETE", "/v1/keys/key_000000000000", {}),
    ("POST", "/v1/reset", {}),
    ("GET", "/v1/export", {}),
    ("POST", "/v1/restore", {"content": b""}),
    ("POST", "/v1/check", {}),
    ("GET", "/v1/status", {}),
    ("POST", "/reset", {}),
]


@pytest.mark.parametrize("key", ["alice", "alice_read", "coach", "bob"])
def test_only_admin_keys_reach_the_whole_store_routes(world: World, key: str):
    keys_before = world.api.ok("GET", "/v1/keys")
    for method, path, kw in ADMIN_ONLY:
        forbidden(world.api.call(method, path, key, **kw))
    assert world.api.ok("GET", "/v1/keys") == keys_before
    world.assert_protected_unchanged()
    assert world.alice_view() == set(world.alice_ids)


def _protected_requests(keyed_server: Any) -> list[tuple[str, str]]:
    some_id = random_id()
    return sorted(
        (method, path.replace("{memory_id}", some_id).replace("{key_id}", "key_000000000000"))
        for method, path in route_table(keyed_server.memory) - PUBLIC
    )


BAD_HEADERS = {
    "no key": None,
    "unknown key": "Bearer lmk_" + "A" * 43,
    "malformed key": "Bearer not-a-key",
    "other scheme": "Basic YWxpY2U6c2VjcmV0",
    "empty bearer": "Bearer",
}


@pytest.mark.parametrize("case", sorted(BAD_HEADERS))
def test_a_request_without_a_valid_key_is_401(world: World, case: str):
    header = BAD_HEADERS[case]
    headers = {} if header is None else {"Authorization": header}
    for method, path in _protected_requests(world.api):
        kw: dict[str, Any] = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
        response = world.api.call(method, path, None, headers=headers, **kw)
        message = assert_error(response, 401, "unauthorized")
        assert response.headers.get("www-authenticate") == "Bearer", (method, path)
        assert "lmk_AAAA" not in message  # the secret sent is never repeated
    world.assert_protected_unchanged()
    assert world.alice_view() == set(world.alice_ids)


def test_keys_created_or_revoked_while_serving_take_effect_at_once(world: World):
    api = world.api
    key_id, secret = api.new_key("user:bob", "read")  # as `linkmem keys create` does
    header = {"Authorization": f"Bearer {secret}"}
    assert api.call("GET", "/v1/memories/count", None, headers=header).json() == {"count": 2}
    api.memory.keys.revoke(key_id)  # as `linkmem keys revoke` does
    gone = api.call("GET", "/v1/memories/count", None, headers=header)
    assert key_id in assert_error(gone, 401, "unauthorized")
    assert gone.headers["www-authenticate"] == "Bearer"

    created = api.ok("POST", "/v1/keys", json={"tenant": "user:bob", "role": "write"})
    header = {"Authorization": f"Token {created['secret']}"}
    assert api.call("GET", "/memories", None, headers=header).status_code == 200
    revoked = api.ok("DELETE", f"/v1/keys/{created['key']['id']}")
    assert revoked["key"]["revoked_at"] is not None
    assert_error(api.call("GET", "/memories", None, headers=header), 401, "unauthorized")
    assert secret not in json.dumps(api.ok("GET", "/v1/keys", params={"include_revoked": "true"}))
    world.assert_protected_unchanged()


def test_scope_ids_that_disagree_with_the_key_are_403(world: World):
    api = world.api
    bodies = [
        ("POST", "/v1/memories", {"messages": "x", "user_id": "bob"}),
        ("POST", "/v1/memories/batch", {"items": ["x"], "user_id": "bob"}),
        ("POST", "/v1/memories/search", {"query": "x", "user_id": "bob"}),
        ("PATCH", f"/v1/memories/{world.alice_ids[0]}", {"text": "x", "user_id": "bob"}),
        ("POST", "/v1/entities/merge", {"keep": "Alice", "drop": "Max", "user_id": "bob"}),
        ("POST", "/v1/entities/rename", {"entity": "Max", "new_name": "M", "user_id": "bob"}),
        ("POST", "/memories", {"messages": [{"role": "user", "content": "x"}], "user_id": "bob"}),
        ("POST", "/search", {"query": "x", "user_id": "bob"}),
    ]
    for method, path, body in bodies:
        forbidden(api.call(method, path, "alice", json=body))
    own = world.alice_ids[0]
    for method, path in (
        ("GET", "/v1/memories"),
        ("DELETE", "/v1/memories"),
        ("GET", "/v1/memories/count"),
        ("GET", f"/v1/memories/{own}"),
        ("DELETE", f"/v1/memories/{own}"),
        ("GET", f"/v1/memories/{own}/history"),
        ("GET", f"/v1/memories/{own}/entities"),
        ("GET", "/v1/entities"),
        ("GET", "/memories"),
        ("DELETE", "/memories"),
    ):
        forbidden(api.call(method, path, "alice", params={"user_id": "bob"}))
    assert world.alice_view() == set(world.alice_ids)
    world.assert_protected_unchanged()


def test_bob_still_reaches_his_own_data(world: World):
    """The attacks above refuse alice; they do not lock bob out of his own memories."""
    api = world.api
    assert ids_of(api.call("GET", "/v1/memories", "bob")) == set(world.bob_ids)
    found = api.call("POST", "/v1/memories/search", "bob", json={"query": "Max"})
    assert ids_of(found) <= set(world.bob_ids) and ids_of(found)
    assert api.ok("GET", f"/memories/{world.bob_ids[0]}", "bob")["memory"] == BOB_TEXTS[0]
    assert_error(
        api.call("GET", f"/v1/memories/{world.bob_deleted}/history", "bob"), 404, "not_found"
    )
