"""Bad input over real HTTP: every malformed request is a 4xx with a stable code and a clear
message (``{"error": {"code", "message"}}``, never a traceback), and writes nothing.

Bodies are sent as raw bytes where the JSON itself is the test (invalid JSON, escaped lone
surrogates), so no client library cleans them up first. The server of this folder takes
JSON bodies up to ``MAX_BODY_MB`` and uploads up to ``MAX_UPLOAD_MB``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from http_checks import MAX_BODY_MB, MAX_UPLOAD_MB, assert_error, store_size

JSON = {"content-type": "application/json"}
MAX_BODY = int(MAX_BODY_MB * 1024 * 1024)
MAX_UPLOAD = int(MAX_UPLOAD_MB * 1024 * 1024)
SEEDED = "Alice adopted Max in Lisbon"
#: One valid body per JSON route ("{id}": the seeded memory).
VALID: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/memories"): {"messages": "Alice met Ana", "user_id": "alice"},
    ("POST", "/v1/memories/batch"): {"items": ["Alice met Ana"], "user_id": "alice"},
    ("POST", "/v1/memories/search"): {"query": "Max", "user_id": "alice"},
    ("PATCH", "/v1/memories/{id}"): {"text": "Alice adopted Rex"},
    ("POST", "/v1/entities/merge"): {"keep": "Max", "drop": "Lisbon", "user_id": "alice"},
    ("POST", "/v1/entities/rename"): {"entity": "Max", "new_name": "Rex", "user_id": "alice"},
    ("POST", "/v1/keys"): {"tenant": "user:carol", "role": "read"},
    ("POST", "/memories"): {"messages": [{"role": "user", "content": "Hi"}], "user_id": "alice"},
    ("POST", "/search"): {"query": "Max", "user_id": "alice"},
    ("PUT", "/memories/{id}"): {"text": "Alice adopted Rex"},
}
ROUTES = sorted(VALID)
#: Fields each route cannot do without ({} is then 422 invalid_request, else 400).
REQUIRED = {
    ("POST", "/v1/memories"),
    ("POST", "/v1/memories/batch"),
    ("POST", "/v1/memories/search"),
    ("POST", "/v1/entities/merge"),
    ("POST", "/v1/entities/rename"),
    ("POST", "/memories"),
    ("POST", "/search"),
}


class Seeded:
    """The server with one memory of alice, and the store's size before the test."""

    def __init__(self, api: Any) -> None:
        self.api = api
        added = api.ok("POST", "/v1/memories", json={"messages": SEEDED, "user_id": "alice"})
        self.id = added["results"][0]["id"]
        self.before = store_size(api)
        self.memories = api.ok("GET", "/v1/memories", params={"user_id": "alice"})

    def send(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return self.api.call(method, path.replace("{id}", self.id), **kw)

    def refused(self, response: httpx.Response, status: int, code: str) -> str:
        """``response`` is the error, and the store is as it was."""
        message = assert_error(response, status, code)
        self.assert_unchanged()
        return message

    def assert_unchanged(self) -> None:
        assert store_size(self.api) == self.before
        assert self.api.ok("GET", "/v1/memories", params={"user_id": "alice"}) == self.memories


@pytest.fixture
def seeded(api: Any) -> Seeded:
    return Seeded(api)


def raw(method: str, path: str, body: bytes) -> tuple[str, str, dict[str, Any]]:
    return method, path, {"content": body, "headers": JSON}


# bodies that are not the object a route takes: 422 invalid_request -----------------------------
NOT_AN_OBJECT = {
    "invalid JSON": b'{"messages": "x",',
    "trailing garbage": b'{"messages": "x"} }',
    "single quotes": b"{'messages': 'x'}",
    "array": b'["Alice met Ana"]',
    "string": b'"Alice met Ana"',
    "number": b"42",
    "null": b"null",
    "raw NUL in a string": b'{"messages": "a\x00b", "user_id": "alice"}',
    "raw control character": b'{"messages": "a\x01b", "user_id": "alice"}',
    "not UTF-8": b'{"messages": "\xff\xfe", "user_id": "alice"}',
    "nested too deeply": b'{"messages": "x", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "an integer of 5000 digits": b'{"messages": "x", "top_k": 1' + b"0" * 5000 + b"}",
}


@pytest.mark.parametrize("case", sorted(NOT_AN_OBJECT))
@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_a_body_that_is_not_an_object_is_422(seeded: Seeded, route: tuple[str, str], case: str):
    response = seeded.send(*route, content=NOT_AN_OBJECT[case], headers=JSON)
    seeded.refused(response, 422, "invalid_request")


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_an_empty_body_is_422(seeded: Seeded, route: tuple[str, str]):
    for headers in (JSON, {}):
        seeded.refused(seeded.send(*route, content=b"", headers=headers), 422, "invalid_request")


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_a_body_that_is_not_sent_as_json_is_422(seeded: Seeded, route: tuple[str, str]):
    body = json.dumps(VALID[route]).encode()
    for headers in ({"content-type": "text/plain"}, {"content-type": "application/x-www-form"}):
        response = seeded.send(*route, content=body, headers=headers)
        seeded.refused(response, 422, "invalid_request")


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_an_unknown_field_is_422_and_named(seeded: Seeded, route: tuple[str, str]):
    for extra in ({"tpo_k": 3}, {"user": "alice"}, {"k" * 5000: 1}):
        response = seeded.send(*route, json={**VALID[route], **extra})
        message = seeded.refused(response, 422, "invalid_request")
        assert next(iter(extra))[:20] in message and len(message) < 500, message


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_missing_fields_are_refused(seeded: Seeded, route: tuple[str, str]):
    if route in REQUIRED:
        message = seeded.refused(seeded.send(*route, json={}), 422, "invalid_request")
        assert "required" in message.lower(), message
    else:  # every field is optional, but the call needs one
        seeded.refused(seeded.send(*route, json={}), 400, "invalid_input")


# values of the wrong type or range: 400 invalid_input (422 when the schema types the field) ----
#: Metadata nested 40 lists deep (32 is the most a backend is asked to store).
DEEP = json.loads('{"a": ' + "[" * 40 + "]" * 40 + "}")
WRONG_VALUES = [
    ("top_k a string", "POST", "/v1/memories/search", {"query": "x", "top_k": "ten"}, 400),
    ("top_k huge", "POST", "/v1/memories/search", {"query": "x", "top_k": 10**9}, 400),
    ("top_k 2**70", "POST", "/v1/memories/search", {"query": "x", "top_k": 2**70}, 400),
    ("top_k negative", "POST", "/v1/memories/search", {"query": "x", "top_k": -1}, 400),
    ("top_k zero", "POST", "/v1/memories/search", {"query": "x", "top_k": 0}, 400),
    ("top_k a float", "POST", "/v1/memories/search", {"query": "x", "top_k": 2.5}, 400),
    ("top_k a bool", "POST", "/v1/memories/search", {"query": "x", "top_k": True}, 400),
    ("mem0 limit a string", "POST", "/search", {"query": "x", "limit": "ten"}, 400),
    ("mem0 top_k huge", "POST", "/search", {"query": "x", "top_k": 10**9}, 400),
    ("query a number", "POST", "/v1/memories/search", {"query": 42}, 400),
    ("query empty", "POST", "/v1/memories/search", {"query": "  "}, 400),
    ("threshold a string", "POST", "/v1/memories/search", {"query": "x", "threshold": "x"}, 400),
    ("threshold 5", "POST", "/v1/memories/search", {"query": "x", "threshold": 5}, 400),
    ("explain a string", "POST", "/v1/memories/search", {"query": "x", "explain": "yes"}, 422),
    ("signals a string", "POST", "/v1/memories/search", {"query": "x", "signals": "all"}, 400),
    ("signals unknown", "POST", "/v1/memories/search", {"query": "x", "signals": {"x": 1}}, 400),
    ("metadata a list", "POST", "/v1/memories", {"messages": "x", "metadata": [1, 2]}, 400),
    ("metadata a string", "POST", "/v1/memories", {"messages": "x", "metadata": "{}"}, 400),
    (
        "metadata scope key",
        "POST",
        "/v1/memories",
        {"messages": "x", "metadata": {"run_id": 1}},
        400,
    ),
    ("metadata too deep", "POST", "/v1/memories", {"messages": "x", "metadata": DEEP}, 400),
    ("user_id a list", "POST", "/v1/memories", {"messages": "x", "user_id": ["alice"]}, 422),
    ("user_id an object", "POST", "/v1/memories", {"messages": "x", "user_id": {"a": 1}}, 422),
    ("user_id a float", "POST", "/v1/memories", {"messages": "x", "user_id": 1.5}, 422),
    ("user_id 2**70", "POST", "/v1/memories", {"messages": "x", "user_id": 2**70}, 400),
    ("user_id a wildcard", "POST", "/v1/memories", {"messages": "x", "user_id": "*"}, 400),
    ("user_id empty", "POST", "/v1/memories", {"messages": "x", "user_id": ""}, 400),
    ("messages a number", "POST", "/v1/memories", {"messages": 42}, 400),
    ("messages empty", "POST", "/v1/memories", {"messages": []}, 400),
    ("messages of numbers", "POST", "/v1/memories", {"messages": [1, 2]}, 400),
    ("message role", "POST", "/v1/memories", {"messages": [{"role": "x", "content": "y"}]}, 400),
    (
        "message content",
        "POST",
        "/v1/memories",
        {"messages": [{"role": "user", "content": 5}]},
        400,
    ),
    ("text too long", "POST", "/v1/memories", {"messages": "x" * 20_001}, 400),
    ("infer a string", "POST", "/v1/memories", {"messages": "x", "infer": "yes"}, 422),
    ("batch items a string", "POST", "/v1/memories/batch", {"items": "abc"}, 400),
    ("batch one bad item", "POST", "/v1/memories/batch", {"items": ["ok", 5]}, 400),
    ("batch metadata count", "POST", "/v1/memories/batch", {"items": ["a"], "metadata": []}, 400),
    ("mem0 messages a number", "POST", "/memories", {"messages": 42}, 400),
    ("merge ids not strings", "POST", "/v1/entities/merge", {"keep": 1, "drop": [2]}, 400),
    ("rename to empty", "POST", "/v1/entities/rename", {"entity": "Max", "new_name": ""}, 400),
    ("rename to a number", "POST", "/v1/entities/rename", {"entity": "Max", "new_name": 7}, 400),
    ("key role", "POST", "/v1/keys", {"tenant": "user:carol", "role": "root"}, 400),
    ("key tenant", "POST", "/v1/keys", {"tenant": "carol", "role": "read"}, 400),
    ("key tenant a list", "POST", "/v1/keys", {"tenant": ["user:carol"]}, 422),
    ("key name too long", "POST", "/v1/keys", {"tenant": "user:c", "name": "n" * 300}, 400),
    ("update text a number", "PATCH", "/v1/memories/{id}", {"text": 5}, 400),
    ("update metadata a list", "PATCH", "/v1/memories/{id}", {"metadata": [1]}, 400),
    ("mem0 update text a list", "PUT", "/memories/{id}", {"text": ["x"]}, 400),
]
SCOPED = {"/v1/memories", "/v1/memories/batch", "/v1/memories/search", "/memories", "/search"}


@pytest.mark.parametrize(
    "name, method, path, body, status", WRONG_VALUES, ids=[c[0] for c in WRONG_VALUES]
)
def test_a_wrong_value_is_refused(
    seeded: Seeded, name: str, method: str, path: str, body: dict[str, Any], status: int
):
    if path in SCOPED and "user_id" not in body:
        body = {**body, "user_id": "alice"}
    if path.startswith("/v1/entities"):
        body = {**body, "user_id": "alice"}
    code = "invalid_input" if status == 400 else "invalid_request"
    seeded.refused(seeded.send(method, path, json=body), status, code)


# filters -----------------------------------------------------------------------------------------
BAD_FILTERS = {
    "unknown operator": {"topic": {"regex": "p.*"}},
    "mongo operator": {"topic": {"$eq": "pets"}},
    "empty operators": {"topic": {}},
    "AND of a string": {"AND": "topic"},
    "AND empty": {"AND": []},
    "OR of numbers": {"OR": [1, 2]},
    "NOT of a number": {"NOT": 3},
    "bad key": {"bad key!": 1},
    "value an object in a list": {"topic": [{"a": 1}]},
    "range of a string": {"n": {"gt": "abc"}},
    "in of a string": {"topic": {"in": "pets"}},
    "too deep": json.loads('{"AND": [' * 40 + '{"a": 1}' + "]}" * 40),
    "too many values": {"topic": {"in": list(range(600))}},
    "a list": [{"topic": "pets"}],
    "a string": "topic=pets",
    "a number": 5,
}


@pytest.mark.parametrize("case", sorted(BAD_FILTERS))
@pytest.mark.parametrize("path", ["/v1/memories/search", "/search"])
def test_bad_filters_in_a_body_are_400(seeded: Seeded, path: str, case: str):
    body = {"query": "Max", "user_id": "alice", "filters": BAD_FILTERS[case]}
    seeded.refused(seeded.send("POST", path, json=body), 400, "invalid_input")


@pytest.mark.parametrize("case", sorted(BAD_FILTERS))
def test_bad_filters_in_a_query_string_are_400(seeded: Seeded, case: str):
    params = {"user_id": "alice", "filters": json.dumps(BAD_FILTERS[case])}
    seeded.refused(seeded.send("GET", "/v1/memories", params=params), 400, "invalid_input")


@pytest.mark.parametrize(
    "text",
    ["topic=pets", "{topic: pets}", "{", "", "[" * 5000 + "]" * 5000, '{"a": 1' + "0" * 5000 + "}"],
    ids=["key=value", "unquoted", "open brace", "empty", "nested too deeply", "5000 digits"],
)
def test_a_filters_query_parameter_that_is_not_json_is_400(seeded: Seeded, text: str):
    params = {"user_id": "alice", "filters": text}
    message = seeded.refused(
        seeded.send("GET", "/v1/memories", params=params), 400, "invalid_input"
    )
    assert "filters" in message


# query strings -----------------------------------------------------------------------------------
QUERY_VALUES = [
    ("limit", "-1", 400),
    ("limit", "0", 400),
    ("limit", "10001", 400),
    ("limit", str(10**30), 400),
    ("limit", "1" + "0" * 5000, 422),
    ("limit", "ten", 422),
    ("limit", "1.5", 422),
    ("offset", "-1", 400),
    ("offset", str(10**12), 400),
    ("offset", str(2**64), 400),
    ("offset", "many", 422),
]
LISTINGS = ["/v1/memories", "/v1/entities", "/v1/entities/related"]


@pytest.mark.parametrize("path", LISTINGS)
@pytest.mark.parametrize("name, value, status", QUERY_VALUES, ids=lambda v: str(v)[:12])
def test_bad_limit_and_offset_are_refused(
    seeded: Seeded, path: str, name: str, value: str, status: int
):
    if path.endswith("related") and name == "offset":
        pytest.skip("related entities take no offset")
    params = {"user_id": "alice", name: value, "entity": seeded.id}
    if path.endswith("related"):
        params["entity"] = "Max"
    code = "invalid_input" if status == 400 else "invalid_request"
    seeded.refused(seeded.send("GET", path, params=params), status, code)


def test_other_bad_query_values_are_refused(seeded: Seeded):
    cases = [
        ("GET", "/v1/entities", {"user_id": "alice", "order": "random"}, 400),
        ("GET", "/v1/memories", {"user_id": "a b"}, 400),
        ("GET", "/v1/memories", {"user_id": "*"}, 400),
        ("GET", "/v1/memories", {"user_id": "a\x00b"}, 400),
        ("GET", "/memories", {"user_id": "alice\x00"}, 400),
        ("GET", "/v1/memories", {}, 400),  # a listing needs a scope
        ("GET", "/v1/entities/memories", {"user_id": "alice"}, 422),  # entity missing
        ("GET", "/v1/entities/memories", {"user_id": "alice", "entity": "a\x00"}, 400),
        ("DELETE", "/v1/memories", {"user_id": "alice", "across_users": "maybe"}, 422),
        ("POST", "/v1/check", {"repair": "perhaps"}, 422),
        ("GET", "/v1/keys", {"include_revoked": "2"}, 422),
    ]
    for method, path, params, status in cases:
        code = "invalid_input" if status == 400 else "invalid_request"
        seeded.refused(seeded.send(method, path, params=params), status, code)


def test_bad_ids_in_the_path_are_4xx(seeded: Seeded):
    for path in ("/v1/memories/%00", "/memories/%00", "/v1/memories/%00/history"):
        seeded.refused(seeded.send("GET", path), 400, "invalid_input")
    for path in ("/v1/memories/%ED%A0%80", "/v1/memories/%FF", "/memories/nope/history"):
        seeded.refused(seeded.send("GET", path), 404, "not_found")
    seeded.refused(
        seeded.send("PATCH", "/v1/memories/%00", json={"text": "x"}), 400, "invalid_input"
    )


def test_a_nul_in_a_key_id_is_400_on_every_backend(seeded: Seeded):
    """Like a memory id: PostgreSQL cannot store NUL, so no backend takes it."""
    seeded.refused(seeded.send("DELETE", "/v1/keys/%00"), 400, "invalid_input")
    seeded.refused(seeded.send("DELETE", "/v1/keys/key%00x"), 400, "invalid_input")


# NUL and lone surrogates, escaped in JSON ---------------------------------------------------------
UNSTORABLE = [
    ("POST", "/v1/memories", '{"messages": "a%sb", "user_id": "alice"}'),
    ("POST", "/v1/memories", '{"messages": [{"role": "user", "content": "%s"}], "user_id": "al"}'),
    ("POST", "/v1/memories", '{"messages": [{"content": "x", "name": "%s"}], "user_id": "al"}'),
    ("POST", "/v1/memories", '{"messages": "x", "user_id": "al%sice"}'),
    ("POST", "/v1/memories", '{"messages": "x", "user_id": "a", "metadata": {"k": "%s"}}'),
    ("POST", "/v1/memories", '{"messages": "x", "user_id": "a", "metadata": {"%s": 1}}'),
    ("POST", "/v1/memories/batch", '{"items": ["ok", "b%s"], "user_id": "alice"}'),
    ("POST", "/v1/memories/search", '{"query": "Max%s", "user_id": "alice"}'),
    ("POST", "/v1/memories/search", '{"query": "x", "user_id": "alice", "filters": {"t": "%s"}}'),
    ("POST", "/v1/memories/search", '{"query": "x", "user_id": "alice", "filters": {"%s": 1}}'),
    ("PATCH", "/v1/memories/{id}", '{"text": "new %s text"}'),
    ("PATCH", "/v1/memories/{id}", '{"metadata": {"k": "%s"}}'),
    ("POST", "/v1/entities/rename", '{"entity": "Max", "new_name": "M%s", "user_id": "alice"}'),
    ("POST", "/v1/entities/rename", '{"entity": "M%s", "new_name": "Rex", "user_id": "alice"}'),
    ("POST", "/v1/entities/merge", '{"keep": "Max", "drop": "%s", "user_id": "alice"}'),
    ("POST", "/v1/keys", '{"tenant": "user:c%s", "role": "read"}'),
    ("POST", "/v1/keys", '{"tenant": "user:c", "role": "read", "name": "n%s"}'),
    ("POST", "/memories", '{"messages": [{"role": "user", "content": "%s"}], "user_id": "a"}'),
    ("POST", "/search", '{"query": "%s", "user_id": "alice"}'),
    ("PUT", "/memories/{id}", '{"text": "%s"}'),
]


@pytest.mark.parametrize("char", ["\\u0000", "\\ud800", "\\udfff"], ids=["NUL", "ud800", "udfff"])
@pytest.mark.parametrize("method, path, template", UNSTORABLE, ids=lambda v: str(v)[:48])
def test_nul_and_lone_surrogates_are_refused(
    seeded: Seeded, method: str, path: str, template: str, char: str
):
    response = seeded.send(method, path, content=(template % char).encode(), headers=JSON)
    message = seeded.refused(response, 400, "invalid_input")
    assert "\\x00" in message or "surrogate" in message or "not a valid" in message, message
    json.loads(response.content.decode("utf-8"))  # the answer itself is valid UTF-8 JSON


def test_an_escaped_surrogate_as_a_field_name_is_refused(seeded: Seeded):
    for route in ROUTES:
        body = json.dumps(VALID[route])[:-1] + ', "\\ud800": 1}'
        response = seeded.send(*route, content=body.encode(), headers=JSON)
        seeded.refused(response, 422, "invalid_request")
        json.loads(response.content.decode("utf-8"))


# uploads -----------------------------------------------------------------------------------------
BAD_UPLOADS = {
    "invalid JSON line": b'{"text": "ok"}\n{"text": \n',
    "not UTF-8": b'{"text": "\xff\xfe"}\n',
    "binary": b"\x00\x01\x02\x03",
    "empty": b"",
    "unknown key": b'{"text": "ok", "colour": "red"}\n',
    "text and messages": b'{"text": "ok", "messages": []}\n',
    "NUL in text": b'{"text": "a\\u0000b"}\n',
    "surrogate in text": b'{"text": "\\ud800"}\n',
    "surrogate as a key": b'{"text": "ok", "\\ud800": 1}\n',
    "one bad line of three": b'{"text": "ok"}\n{"text": 5}\n{"text": "fine"}\n',
    "a bad scope id": b'{"text": "ok", "user_id": "*"}\n',
    "a line nested too deeply": b'{"text": "x", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    "an integer of 5000 digits": b'{"text": "x", "metadata": {"n": 1' + b"0" * 5000 + b"}}\n",
}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_a_bad_import_file_is_400_and_writes_nothing(seeded: Seeded, case: str):
    params = {"user_id": "alice"}
    response = seeded.send("POST", "/v1/import", content=BAD_UPLOADS[case], params=params)
    message = seeded.refused(response, 400, "invalid_input")
    assert "nothing was written" in message


def test_bad_import_parameters_are_refused(seeded: Seeded):
    body = b'{"text": "ok"}\n'
    for params, status in (
        ({"user_id": "alice", "batch_size": "0"}, 422),
        ({"user_id": "alice", "batch_size": "-5"}, 422),
        ({"user_id": "alice", "batch_size": "lots"}, 422),
        ({"user_id": "alice", "skip_existing": "sometimes"}, 422),
        ({"user_id": "*"}, 400),
        ({}, 400),  # no scope in the file nor the query
    ):
        code = "invalid_input" if status == 400 else "invalid_request"
        seeded.refused(seeded.send("POST", "/v1/import", content=body, params=params), status, code)


@pytest.mark.parametrize(
    "body",
    [b"", b"garbage", b'{"type": "header"}\n', b'{"type":"header","format":"linkmem-export",'],
    ids=["empty", "garbage", "bad header", "cut header"],
)
def test_a_bad_restore_file_is_400_and_writes_nothing(seeded: Seeded, body: bytes):
    seeded.refused(seeded.send("POST", "/v1/restore", content=body), 400, "invalid_input")


# sizes -------------------------------------------------------------------------------------------
def _big_body(size: int) -> bytes:
    body = json.dumps({"messages": "x" * size, "user_id": "alice"}).encode()
    assert len(body) > size
    return body


def _chunks(body: bytes, size: int = 8192) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_a_body_over_the_limit_is_413(seeded: Seeded, route: tuple[str, str]):
    body = _big_body(MAX_BODY + 100)
    message = seeded.refused(seeded.send(*route, content=body, headers=JSON), 413, "too_large")
    assert str(MAX_BODY) in message and "max_body_mb" in message


@pytest.mark.parametrize("route", ROUTES, ids=" ".join)
def test_a_chunked_body_over_the_limit_is_413(seeded: Seeded, route: tuple[str, str]):
    body = _big_body(MAX_BODY + 100)
    response = seeded.send(*route, content=_chunks(body), headers=JSON)
    assert "content-length" not in response.request.headers  # sent chunked
    seeded.refused(response, 413, "too_large")


def test_a_body_just_under_the_limit_is_read(seeded: Seeded):
    body = json.dumps({"messages": "y" * 20_000, "user_id": "alice", "metadata": {}}).encode()
    assert len(body) < MAX_BODY
    seeded.refused(
        seeded.send("POST", "/v1/memories", content=body[:-1], headers=JSON), 422, "invalid_request"
    )
    assert seeded.send("POST", "/v1/memories", content=body, headers=JSON).status_code == 200


def test_an_upload_over_its_limit_is_413(seeded: Seeded):
    line = json.dumps({"text": "z" * 1000}).encode() + b"\n"
    body = line * (MAX_UPLOAD // len(line) + 5)
    params = {"user_id": "alice"}
    message = seeded.refused(
        seeded.send("POST", "/v1/import", content=body, params=params), 413, "too_large"
    )
    assert "max_upload_mb" in message
    chunked = seeded.send("POST", "/v1/import", content=_chunks(body), params=params)
    seeded.refused(chunked, 413, "too_large")
    seeded.refused(seeded.send("POST", "/v1/restore", content=_chunks(body)), 413, "too_large")
    small = line * 3  # a JSON route's limit does not apply to an upload under its own
    assert (
        len(body) > MAX_BODY
        and seeded.send("POST", "/v1/import", content=small, params=params).status_code == 200
    )


def _raw_request(url: str, head: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (a lying Content-Length); the first answer's status, headers
    and body."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        header_blob, _, rest = data.partition(b"\r\n\r\n")
        lines = header_blob.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return int(lines[0].split()[1]), headers, rest[:length]


def _head(seeded: Seeded, path: str, length: int) -> str:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {seeded.api.secrets['admin']}\r\nContent-Length: {length}\r\n"
        "Connection: close\r\n"
    )


def _raw_error(status: int, headers: dict[str, str], body: bytes, code: str) -> None:
    response = httpx.Response(status, headers=headers, content=body)
    assert_error(response, response.status_code, code)


def test_a_content_length_over_the_limit_is_413_before_the_body_is_sent(seeded: Seeded):
    status, headers, body = _raw_request(seeded.api.url, _head(seeded, "/v1/memories", 10**9), b"")
    assert status == 413
    _raw_error(status, headers, body, "too_large")
    seeded.assert_unchanged()


def test_a_content_length_shorter_than_the_body_is_refused(seeded: Seeded):
    body = _big_body(MAX_BODY + 100)
    status, headers, answer = _raw_request(seeded.api.url, _head(seeded, "/v1/memories", 40), body)
    assert status == 422, answer  # the first 40 bytes are not a JSON object
    _raw_error(status, headers, answer, "invalid_request")
    seeded.assert_unchanged()


def test_a_content_length_not_a_number_is_400(seeded: Seeded):
    head = _head(seeded, "/v1/memories", 0).replace("Content-Length: 0", "Content-Length: ten")
    status, _, _ = _raw_request(seeded.api.url, head, b'{"messages": "x"}')
    assert status == 400
    seeded.assert_unchanged()


# routes and methods ------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["admin", None])
def test_unknown_routes_are_404_with_the_error_body(seeded: Seeded, key: str | None):
    for method, path in (
        ("GET", "/v1/nope"),
        ("GET", "/nope"),
        ("POST", "/v2/memories"),
        ("GET", "/v1/memories/x/y/z"),
        ("DELETE", "/v1/entities/x"),
        ("GET", "/v1/keys/x/y"),
    ):
        message = seeded.refused(seeded.api.call(method, path, key), 404, "not_found")
        assert path in message


@pytest.mark.parametrize("key", ["admin", None])
def test_wrong_methods_are_405_with_the_error_body(seeded: Seeded, key: str | None):
    for method, path in (
        ("PUT", "/v1/memories"),
        ("PATCH", "/v1/memories"),
        ("POST", "/v1/memories/count"),
        ("DELETE", "/v1/status"),
        ("GET", "/v1/reset"),
        ("GET", "/v1/import"),
        ("PUT", "/v1/memories/{id}"),
        ("PATCH", "/memories/{id}"),
        ("GET", "/search"),
        ("GET", "/reset"),
        ("GET", "/configure"),
    ):
        response = seeded.api.call(method, path.replace("{id}", seeded.id), key)
        message = seeded.refused(response, 405, "method_not_allowed")
        assert method in message
