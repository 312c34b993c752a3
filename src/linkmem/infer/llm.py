"""A small client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

One method matters: :meth:`ChatClient.complete_json` sends a system and a user message, asks
for JSON of a given schema (structured output where the server supports it) and returns the
parsed JSON. Transport failures are retried with backoff (429, 5xx, timeouts, refused
connections) and end as :class:`LLMUnavailable`; an answer that is not JSON is
:class:`LLMInvalidOutput`. Checking the JSON against the schema is the caller's job.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from linkmem.config import LLMSettings
from linkmem.errors import ConfigError, LLMInvalidOutput, LLMUnavailable

_RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0
#: "auto" tries these in order; a refusal of the shape moves to the next one.
_MODES = ("json_schema", "json_object", "none")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass
class CallStats:
    """What the client has done so far (tests and benchmarks read it)."""

    calls: int = 0  # complete_json calls
    requests: int = 0  # HTTP requests, retries included
    seconds: float = 0.0  # wall time spent inside complete_json


class ChatClient:
    """Chat completions with JSON answers; safe to share between threads."""

    def __init__(
        self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        if not settings.base_url or not settings.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"llm.base_url must be an http(s) URL such as http://127.0.0.1:8080/v1, got "
                f"{settings.base_url!r}; set it in [llm], LINKMEM_LLM_BASE_URL or llm={{...}}"
            )
        if not settings.model:
            raise ConfigError("llm.model is not set; set it in [llm] or LINKMEM_LLM_MODEL")
        if settings.structured not in ("auto", *_MODES):
            raise ConfigError(
                f"llm.structured must be auto, {', '.join(_MODES)}; got {settings.structured!r}"
            )
        if settings.retries < 0 or settings.timeout <= 0 or settings.backoff < 0:
            raise ConfigError("llm.timeout must be positive, llm.retries and backoff >= 0")
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self.stats = CallStats()
        self._sleep = sleep
        self._mode = settings.structured if settings.structured != "auto" else _MODES[0]
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None

    @property
    def description(self) -> str:
        return f"{self.settings.model} at {self.settings.base_url}"

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                headers = {"User-Agent": "linkmem"}
                if self.settings.api_key:
                    headers["Authorization"] = f"Bearer {self.settings.api_key}"
                timeout = httpx.Timeout(self.settings.timeout, connect=min(5.0, self.timeout))
                self._http = httpx.Client(headers=headers, timeout=timeout)
            return self._http

    @property
    def timeout(self) -> float:
        return self.settings.timeout

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    # the one call ------------------------------------------------------------------------------
    def complete_json(self, system: str, user: str, schema: dict[str, Any], name: str) -> Any:
        """The parsed JSON answer to ``system`` + ``user``, asked to follow ``schema``."""
        started = time.perf_counter()
        try:
            content = self._complete(system, user, schema, name)
        finally:
            self.stats.calls += 1
            self.stats.seconds += time.perf_counter() - started
        return parse_json_answer(content)

    def _complete(self, system: str, user: str, schema: dict[str, Any], name: str) -> str:
        while True:
            mode = self._mode
            response = self._post(self._body(system, user, schema, name, mode))
            if _refuses_format(response) and self._fall_back(mode):
                continue
            return _content(_answer(response, self.description))

    def _fall_back(self, mode: str) -> bool:
        """After a refused shape under "auto": try the next way of asking for JSON."""
        if self.settings.structured != "auto" or mode == _MODES[-1]:
            return False
        with self._lock:
            if self._mode == mode:
                self._mode = _MODES[_MODES.index(mode) + 1]
        return True

    def _body(
        self, system: str, user: str, schema: dict[str, Any], name: str, mode: str
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
        }
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """One request, retried on 429 / 5xx / timeouts / refused connections."""
        attempts = self.settings.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            self.stats.requests += 1
            try:
                response = self._client().post(self.url, json=body)
            except httpx.TimeoutException as e:
                if last:
                    raise LLMUnavailable(self._gave_up(f"no answer within {self.timeout} s")) from e
                self._sleep(self._wait(attempt, None))
                continue
            except httpx.TransportError as e:
                if last:
                    raise LLMUnavailable(self._gave_up(f"{type(e).__name__}: {e}")) from e
                self._sleep(self._wait(attempt, None))
                continue
            if response.status_code in _RETRY_STATUSES and not last:
                if "response_format" in body and _refuses_format(response):
                    return response  # not a passing failure: ask differently instead
                self._sleep(self._wait(attempt, response.headers.get("retry-after")))
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), _MAX_RETRY_AFTER)
            except ValueError:
                pass
        base = self.settings.backoff * (2**attempt)
        return base + random.uniform(0, base / 2)

    def _gave_up(self, why: str) -> str:
        tries = self.settings.retries + 1
        return (
            f"the LLM {self.description} failed after {tries} attempt(s): {why}; check that "
            "the server runs and llm.base_url / LINKMEM_LLM_BASE_URL point at it"
        )

    def probe(self) -> str:
        """A one-token request; what ``linkmem doctor`` shows (raises like any call)."""
        started = time.perf_counter()
        body = {
            "model": self.settings.model,
            "messages": [{"role": "user", "content": "Say OK."}],
            "max_tokens": 1,
        }
        _answer(self._post(body), self.description)
        return f"{self.description} answers in {(time.perf_counter() - started) * 1000:.0f} ms"


def _refuses_format(response: httpx.Response) -> bool:
    """A refusal of the request's shape: 400/422, or a 5xx that names ``response_format``
    (llama-cpp-python's server answers 500 to a ``json_schema`` type it does not know)."""
    if response.status_code in (400, 422):
        return True
    return response.status_code >= 500 and "response_format" in response.text[:4000]


def _answer(response: httpx.Response, where: str) -> dict[str, Any]:
    """The JSON body of a 2xx answer; any other status is ``LLMUnavailable``."""
    if not response.is_success:
        hint = {401: "check llm.api_key / LINKMEM_LLM_API_KEY", 403: "check llm.api_key"}.get(
            response.status_code, "check llm.base_url and llm.model"
        )
        raise LLMUnavailable(
            f"the LLM {where} answered HTTP {response.status_code}: {response.text[:300]!r}; {hint}"
        )
    try:
        body = response.json()
    except ValueError as e:
        raise LLMInvalidOutput(f"the LLM {where} answered a body that is not JSON") from e
    if not isinstance(body, dict):
        raise LLMInvalidOutput(f"the LLM {where} answered {type(body).__name__}, not an object")
    return body


def _content(body: dict[str, Any]) -> str:
    """The text of the first choice (``choices[0].message.content``)."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as e:
        raise LLMInvalidOutput("the LLM's answer has no choices[0].message") from e
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        refusal = message.get("refusal") if isinstance(message, dict) else None
        why = f" (refusal: {refusal!r})" if refusal else ""
        raise LLMInvalidOutput(f"the LLM's answer is empty{why}")
    return content


def parse_json_answer(content: str) -> Any:
    """JSON from a model's text: a ```json fence and a <think> block are tolerated, anything
    else that is not one JSON value is ``LLMInvalidOutput``."""
    text = _THINK.sub("", content).strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError as e:
        raise LLMInvalidOutput(f"the LLM's answer is not valid JSON ({e}): {text[:200]!r}") from e
