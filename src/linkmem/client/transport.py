"""What both remote clients share: settings, encoding a call, decoding an answer into the
result or into the exception an embedded ``Memory`` would have raised, and when to retry."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import httpx

from linkmem.client.calls import Call
from linkmem.errors import BackendUnavailable, InvalidInput, LinkmemError, error_class
from linkmem.validation import shown

URL_ENV, KEY_ENV = "LINKMEM_URL", "LINKMEM_API_KEY"
#: Errors where the request never reached the server: any call may be sent again.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
#: Errors where the answer was lost: only idempotent calls are sent again.
LOST = (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


@dataclass(frozen=True)
class ClientSettings:
    url: str
    api_key: str | None
    timeout: float
    retries: int

    @classmethod
    def resolve(
        cls, url: str | None, api_key: str | None, timeout: float, retries: int
    ) -> ClientSettings:
        url = url or os.environ.get(URL_ENV)
        if not url:
            raise InvalidInput(
                f"pass the server's url (or set {URL_ENV}), e.g. http://127.0.0.1:8765"
            )
        if not url.startswith(("http://", "https://")):
            raise InvalidInput(f"url must start with http:// or https://, got {shown(url)}")
        if retries < 0 or timeout <= 0:
            raise InvalidInput("timeout must be positive and retries at least 0")
        return cls(url.rstrip("/"), api_key or os.environ.get(KEY_ENV) or None, timeout, retries)

    def headers(self) -> dict[str, str]:
        headers = {"User-Agent": "linkmem-client"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def timeouts(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, connect=min(self.timeout, 5.0))

    def client_options(self) -> dict[str, Any]:
        """What ``httpx.Client`` / ``httpx.AsyncClient`` are built with (pooled)."""
        return {"base_url": self.url, "headers": self.headers(), "timeout": self.timeouts()}


def encode(call: Call) -> dict[str, Any]:
    """``httpx`` request arguments; arguments that JSON cannot carry are ``InvalidInput``."""
    kwargs: dict[str, Any] = {"params": as_params(call.params)}
    if call.body is not None:
        try:
            content = json.dumps(call.body, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidInput(f"cannot send this call's arguments as JSON: {e}") from e
        kwargs["content"] = content.encode("utf-8", "surrogatepass")
        kwargs["headers"] = {"Content-Type": "application/json"}
    return kwargs


def as_params(params: dict[str, Any]) -> dict[str, str]:
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}


def decode(response: httpx.Response, unwrap: str | None = None) -> Any:
    """The JSON of a 2xx answer (or its ``unwrap`` key); otherwise the linkmem exception
    it carries."""
    if response.is_success:
        answer = response.json()
        return answer if unwrap is None else answer[unwrap]
    raise error_from(response)


def error_from(response: httpx.Response) -> LinkmemError:
    try:
        error = response.json()["error"]
        return error_class(error["code"])(error["message"])
    except (ValueError, KeyError, TypeError):
        text = response.text[:200]
        return LinkmemError(f"the server answered {response.status_code}: {text}")


def unreachable(settings: ClientSettings, error: Exception) -> BackendUnavailable:
    return BackendUnavailable(
        f"cannot reach the linkmem server at {settings.url} ({type(error).__name__}: {error}); "
        "start it with 'linkmem serve' or check the url"
    )


def again(call: Call, attempt: int, retries: int, error: Exception | None, response: Any) -> bool:
    """Whether attempt number ``attempt`` (from 0) of ``call`` is followed by another."""
    return attempt < retries and should_retry(call, error, response)


def finish(settings: ClientSettings, call: Call, error: Exception | None, response: Any) -> Any:
    """The result of the last attempt: its answer, or the exception it ends in."""
    if error is not None:
        raise unreachable(settings, error) from error
    return decode(response, call.unwrap)


def should_retry(call: Call, error: Exception | None, response: httpx.Response | None) -> bool:
    """Whether this attempt may be repeated: never for a write whose answer was lost."""
    if error is not None:
        return isinstance(error, NOT_SENT) or (call.idempotent and isinstance(error, LOST))
    return call.idempotent and response is not None and response.status_code in (502, 503, 504)


def backoff(attempt: int) -> float:
    return min(0.1 * 2**attempt, 2.0)
