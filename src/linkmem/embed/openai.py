"""Embedder for any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Uses only the standard library (``urllib.request``). Works with OpenAI itself and with local
servers that speak the same protocol (llama.cpp, vLLM, Ollama, LM Studio, TEI).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence

import numpy as np

from linkmem.embed.base import l2_normalise
from linkmem.embed.registry import check_texts
from linkmem.errors import ConfigError, LinkmemError, ModelUnavailable

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0


class OpenAIEmbedder:
    """Calls an OpenAI-compatible embeddings endpoint in batches; rows are unit length.

    ``dim`` is the expected vector size; when omitted it is learnt from the first response
    (reading :attr:`dim` before any call sends one short probe request).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        *,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        parsed = urllib.parse.urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ConfigError(
                f"base_url {base_url!r} is not an http(s) URL: use e.g. "
                "https://api.openai.com/v1 or http://localhost:8080/v1."
            )
        if not model:
            raise ConfigError("The openai embedder needs a model name: set model.")
        if batch_size <= 0:
            raise ConfigError(f"batch_size must be positive, got {batch_size}.")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key
        self._dim = dim
        self._batch_size = batch_size
        self._timeout = timeout
        self._retries = max(0, retries)
        self._backoff = backoff
        self.model_id = f"openai:{model}"
        #: HTTP requests sent (retries included); useful to tests and diagnostics.
        self.requests = 0

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._post(["dimension probe"]).shape[1]
        return self._dim

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        parts = [
            self._post(items[i : i + self._batch_size])
            for i in range(0, len(items), self._batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self._model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        payload = self._send(request)
        return self._parse(payload, len(texts))

    def _send(self, request: urllib.request.Request) -> bytes:
        attempt = 0
        while True:
            self.requests += 1
            try:
                with urllib.request.urlopen(request, timeout=self._timeout) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if exc.code in _RETRY_STATUSES and attempt < self._retries:
                    time.sleep(self._retry_delay(attempt, exc.headers.get("Retry-After")))
                    attempt += 1
                    continue
                raise self._http_error(exc.code, detail) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                raise ModelUnavailable(
                    f"Could not reach the embeddings endpoint {self._url}: {reason}. Check "
                    "base_url and that the server is running."
                ) from exc

    def _retry_delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return max(0.0, min(float(retry_after), _MAX_RETRY_AFTER))
            except ValueError:
                pass  # an HTTP date: fall back to exponential backoff
        return self._backoff * (2**attempt)

    def _http_error(self, status: int, detail: str) -> LinkmemError:
        where = f"{self._url} answered HTTP {status}"
        if status in (401, 403):
            return ModelUnavailable(f"{where} ({detail}): check api_key.")
        if status == 404:
            return ModelUnavailable(
                f"{where} ({detail}): check base_url (it usually ends in /v1) and that "
                f"model {self._model!r} exists on the server."
            )
        if status in _RETRY_STATUSES:
            return ModelUnavailable(
                f"{where} ({detail}) after {self._retries + 1} attempts: the server is "
                "overloaded or failing; try again later or lower batch_size."
            )
        return LinkmemError(
            f"{where} ({detail}): the request was refused; check model and batch_size."
        )

    def _parse(self, payload: bytes, expected: int) -> np.ndarray:
        try:
            data = json.loads(payload)["data"]
            rows = sorted(data, key=lambda item: item.get("index", 0))
            matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LinkmemError(
                f"{self._url} did not return an OpenAI embeddings response ({exc!r}): check "
                "that base_url points at an OpenAI-compatible API."
            ) from exc
        if matrix.ndim != 2 or matrix.shape[0] != expected:
            raise LinkmemError(
                f"{self._url} returned {matrix.shape[0] if matrix.ndim else 0} vectors for "
                f"{expected} texts: the server does not follow the embeddings API."
            )
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise LinkmemError(
                f"{self._url} returned {matrix.shape[1]}-dimensional vectors, expected "
                f"{self._dim}: fix the dim setting or the model name."
            )
        return l2_normalise(matrix)


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """The server's error message, short enough for a log line."""
    try:
        raw = exc.read().decode("utf-8", "replace")
    except OSError:
        return exc.reason or "no detail"
    try:
        message = json.loads(raw)["error"]
        if isinstance(message, dict):
            message = message.get("message", message)
        raw = str(message)
    except (ValueError, KeyError, TypeError):
        pass
    return raw.strip()[:300] or str(exc.reason)
