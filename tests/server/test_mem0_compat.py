"""The Mem0-compatible routes over real HTTP, with the request shapes of Mem0's self-hosted
REST server (``server/main.py`` of mem0ai/mem0) sent by plain httpx, as a Mem0 client sends
them, and the answers that server documents: ``{"results": [...]}`` rows with ``id``,
``memory``, ``user_id``, ``metadata``, ``created_at``; ``{"message": ...}`` for deletes and
reset; a redirect from ``/`` to the OpenAPI page. Where Mem0 answers 500, linkmem answers
the error body with a 4xx.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from http_checks import assert_error

CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I adopted a dog called Max in Lisbon"},
    {"role": "assistant", "content": "Congratulations on adopting Max!"},
]
ROW_FIELDS = {"id", "memory", "user_id", "metadata", "created_at", "updated_at"}


@pytest.fixture
def mem0(api: Any) -> Any:
    """The server, empty; requests carry the admin key as a Mem0 client configured with one."""
    return api


def add(api: Any, messages: list[dict[str, str]], **fields: Any) -> list[dict[str, Any]]:
    answer = api.ok("POST", "/memories", json={"messages": messages, **fields})
    assert set(answer) == {"results"}
    return answer["results"]


def test_add_returns_the_added_memories(mem0: Any):
    results = add(mem0, CHAT, user_id="alice", metadata={"source": "chat", "n": 1})
    assert [r["event"] for r in results] == ["ADD", "ADD"]  # the system message is context
    assert [r["memory"] for r in results] == [m["content"] for m in CHAT[1:]]
    for row in results:
        assert ROW_FIELDS <= set(row), row
        assert row["user_id"] == "alice" and row["metadata"] == {"source": "chat", "n": 1}
        uuid.UUID(row["id"])
    assert [r["role"] for r in results] == ["user", "assistant"]


def test_get_all_lists_a_scope_newest_first(mem0: Any):
    first = add(mem0, CHAT[1:2], user_id="alice")[0]
    second = add(mem0, [{"role": "user", "content": "Max likes the beach"}], user_id="alice")[0]
    add(mem0, [{"role": "user", "content": "Bob has a cat"}], user_id="bob")
    listing = mem0.ok("GET", "/memories", params={"user_id": "alice"})
    assert set(listing) == {"results"}
    assert [r["id"] for r in listing["results"]] == [second["id"], first["id"]]
    assert all(ROW_FIELDS <= set(r) and r["user_id"] == "alice" for r in listing["results"])


@pytest.mark.parametrize("scope", [{"agent_id": "coach"}, {"run_id": "session-1"}])
def test_agent_and_run_scopes(mem0: Any, scope: dict[str, str]):
    added = add(mem0, CHAT[1:2], **scope)
    add(mem0, CHAT[1:2], user_id="alice")
    listing = mem0.ok("GET", "/memories", params=scope)["results"]
    assert [r["id"] for r in listing] == [added[0]["id"]]
    key, value = next(iter(scope.items()))
    assert listing[0][key] == value
    found = mem0.ok("POST", "/search", json={"query": "dog Max", **scope})["results"]
    assert [r["id"] for r in found] == [added[0]["id"]]


def test_get_one_memory(mem0: Any):
    row = add(mem0, CHAT[1:2], user_id="alice", metadata={"source": "chat"})[0]
    got = mem0.ok("GET", f"/memories/{row['id']}")
    assert ROW_FIELDS <= set(got)
    assert (got["id"], got["memory"], got["user_id"], got["metadata"]) == (
        row["id"],
        CHAT[1]["content"],
        "alice",
        {"source": "chat"},
    )


def test_search_with_user_id_and_filters(mem0: Any):
    dog = add(mem0, CHAT[1:2], user_id="alice", metadata={"topic": "pets"})[0]
    add(mem0, [{"role": "user", "content": "I work in Lisbon as a nurse"}], user_id="alice")
    add(mem0, [{"role": "user", "content": "My dog Max is old"}], user_id="bob")
    body = {"query": "dog Max", "user_id": "alice", "filters": {"topic": "pets"}}
    found = mem0.ok("POST", "/search", json=body)
    assert set(found) == {"results"}
    assert [r["id"] for r in found["results"]] == [dog["id"]]
    hit = found["results"][0]
    assert ROW_FIELDS | {"score"} <= set(hit) and isinstance(hit["score"], float)
    # Mem0 v1.1 puts the scope ids in the filters
    found = mem0.ok("POST", "/search", json={"query": "Lisbon", "filters": {"user_id": "alice"}})
    assert {r["user_id"] for r in found["results"]} == {"alice"} and len(found["results"]) == 2
    limited = mem0.ok("POST", "/search", json={"query": "Lisbon", "user_id": "alice", "limit": 1})
    assert len(limited["results"]) == 1


@pytest.mark.parametrize("field", ["text", "data", "memory"])
def test_put_updates_a_memory_with_a_json_object(mem0: Any, field: str):
    row = add(mem0, CHAT[1:2], user_id="alice", metadata={"source": "chat"})[0]
    body = {field: "I adopted a dog called Max in Porto", "metadata": {"city": "Porto"}}
    answer = mem0.ok("PUT", f"/memories/{row['id']}", json=body)
    assert answer["results"][0]["event"] == "UPDATE"
    got = mem0.ok("GET", f"/memories/{row['id']}")
    assert got["memory"] == "I adopted a dog called Max in Porto"
    assert got["metadata"] == {"source": "chat", "city": "Porto"}
    assert got["updated_at"] >= got["created_at"]
    assert mem0.ok("PUT", f"/memories/{row['id']}", json={"metadata": {"n": 2}})["results"]


def test_history_is_a_list_of_events(mem0: Any):
    row = add(mem0, CHAT[1:2], user_id="alice")[0]
    mem0.ok("PUT", f"/memories/{row['id']}", json={"text": "I adopted Max in Porto"})
    history = mem0.ok("GET", f"/memories/{row['id']}/history")
    assert isinstance(history, list)
    assert [e["event"] for e in history] == ["ADD", "UPDATE"]
    assert all(e["memory_id"] == row["id"] for e in history)
    assert (history[0]["old_memory"], history[0]["new_memory"]) == (None, CHAT[1]["content"])
    assert (history[1]["old_memory"], history[1]["new_memory"]) == (
        CHAT[1]["content"],
        "I adopted Max in Porto",
    )
    assert all(e["created_at"] for e in history)


def test_delete_one_memory(mem0: Any):
    row, other = add(mem0, CHAT, user_id="alice")
    answer = mem0.ok("DELETE", f"/memories/{row['id']}")
    assert answer == {"message": "Memory deleted successfully"}
    assert_error(mem0.call("GET", f"/memories/{row['id']}"), 404, "not_found")
    assert [
        r["id"] for r in mem0.ok("GET", "/memories", params={"user_id": "alice"})["results"]
    ] == [other["id"]]
    assert_error(mem0.call("DELETE", f"/memories/{row['id']}"), 404, "not_found")
    events = [e["event"] for e in mem0.ok("GET", f"/memories/{row['id']}/history")]
    assert events == ["ADD", "DELETE"]  # an admin still reads a deleted memory's history


def test_delete_all_of_a_scope(mem0: Any):
    add(mem0, CHAT, user_id="alice")
    bob = add(mem0, CHAT[1:2], user_id="bob")
    answer = mem0.ok("DELETE", "/memories", params={"user_id": "alice"})
    assert answer == {"message": "All relevant memories deleted"}
    assert mem0.ok("GET", "/memories", params={"user_id": "alice"}) == {"results": []}
    assert [r["id"] for r in mem0.ok("GET", "/memories", params={"user_id": "bob"})["results"]] == [
        bob[0]["id"]
    ]


def test_reset_deletes_everything(mem0: Any):
    add(mem0, CHAT, user_id="alice")
    add(mem0, CHAT, agent_id="coach")
    assert mem0.ok("POST", "/reset") == {"message": "All memories reset"}
    assert mem0.ok("GET", "/v1/memories/count") == {"count": 0}
    assert mem0.ok("GET", "/memories", params={"user_id": "alice"}) == {"results": []}


@pytest.mark.parametrize("key", ["admin", None, "alice"])
def test_configure_is_not_offered(mem0: Any, key: str | None):
    body = {"vector_store": {"provider": "qdrant"}, "llm": {"provider": "openai"}}
    response = mem0.call("POST", "/configure", key, json=body)
    assert response.status_code in (404, 410)
    message = assert_error(
        response, response.status_code, "gone" if response.status_code == 410 else "not_found"
    )
    assert "configure" in message
    assert mem0.ok("GET", "/v1/ready", None)["status"] == "ready"  # the server is unchanged


def test_home_redirects_to_the_explorer(mem0: Any):
    response = mem0.call("GET", "/", None, follow_redirects=False)
    assert response.status_code in (302, 307)
    assert response.headers["location"] == "/ui/"
    followed = mem0.call("GET", "/", None, follow_redirects=True)
    assert followed.status_code == 200 and followed.url.path == "/ui/"


def test_docs_and_openapi(mem0: Any):
    docs = mem0.call("GET", "/docs", None)
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    assert "openapi.json" in docs.text
    spec = mem0.ok("GET", "/openapi.json", None)
    paths = spec["paths"]
    expected = {
        "/memories": {"post", "get", "delete"},
        "/memories/{memory_id}": {"get", "put", "delete"},
        "/memories/{memory_id}/history": {"get"},
        "/search": {"post"},
        "/reset": {"post"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), (path, sorted(paths[path]))
    assert "/configure" not in paths
    assert spec["info"]["title"] == "linkmem"


NO_ID = [
    ("POST", "/memories", {"json": {"messages": CHAT}}),
    ("POST", "/memories", {"json": {"messages": CHAT, "metadata": {"a": 1}}}),
    ("GET", "/memories", {}),
    ("DELETE", "/memories", {}),
]


@pytest.mark.parametrize("method, path, kw", NO_ID, ids=lambda v: str(v)[:30])
def test_a_call_without_any_id_is_400(mem0: Any, method: str, path: str, kw: dict[str, Any]):
    kept = add(mem0, CHAT, user_id="alice")
    message = assert_error(mem0.call(method, path, **kw), 400, "invalid_input")
    assert "user_id" in message and "agent_id" in message and "run_id" in message
    listing = mem0.ok("GET", "/memories", params={"user_id": "alice"})["results"]
    assert {r["id"] for r in listing} == {r["id"] for r in kept}
    assert mem0.ok("GET", "/v1/memories/count") == {"count": 2}


def test_errors_are_4xx_with_the_error_body_not_500(mem0: Any):
    missing = str(uuid.uuid4())
    for method, path, kw in (
        ("GET", f"/memories/{missing}", {}),
        ("PUT", f"/memories/{missing}", {"json": {"text": "x"}}),
        ("DELETE", f"/memories/{missing}", {}),
        ("GET", f"/memories/{missing}/history", {}),
    ):
        assert_error(mem0.call(method, path, **kw), 404, "not_found")
    assert_error(mem0.call("POST", "/search", json={"user_id": "alice"}), 422, "invalid_request")
    assert_error(mem0.call("POST", "/memories", json={"user_id": "alice"}), 422, "invalid_request")
    assert_error(
        mem0.call("POST", "/memories", json={"messages": [], "user_id": "a"}), 400, "invalid_input"
    )
    assert_error(mem0.call("PUT", f"/memories/{missing}", json=["x"]), 422, "invalid_request")


def test_a_tenant_key_needs_no_id(mem0: Any):
    """A Mem0 client given a tenant's key (``Token`` or ``Bearer``) adds and lists in its scope."""
    headers = {"Authorization": f"Token {mem0.secrets['alice']}"}
    with httpx.Client(base_url=mem0.url, headers=headers, timeout=30) as client:
        added = client.post("/memories", json={"messages": CHAT[1:]})
        assert added.status_code == 200, added.text
        assert {r["user_id"] for r in added.json()["results"]} == {"alice"}
        listing = client.get("/memories").json()["results"]
        assert {r["id"] for r in listing} == {r["id"] for r in added.json()["results"]}
        found = client.post("/search", json={"query": "Max"}).json()["results"]
        assert found and {r["user_id"] for r in found} == {"alice"}
        assert client.delete("/memories").json() == {"message": "All relevant memories deleted"}
        assert client.get("/memories").json() == {"results": []}
        assert_error(client.post("/reset"), 403, "forbidden")


def test_without_a_key_a_keyed_server_answers_401(mem0: Any):
    for method, path in (("GET", "/memories"), ("POST", "/search"), ("POST", "/reset")):
        response = mem0.call(method, path, None, params={"user_id": "alice"})
        assert_error(response, 401, "unauthorized")
        assert response.headers["www-authenticate"] == "Bearer"
