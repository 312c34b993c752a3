"""``RemoteMemory``: the ``Memory`` API over HTTP, against ``linkmem serve``.

Same methods, arguments, return shapes and exceptions as ``Memory`` (the calls are generated
from ``linkmem.client.calls``); switching an agent from embedded to server is one line::

    memory = RemoteMemory("http://127.0.0.1:8765", api_key="lmk_...")
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx

from linkmem.client import calls, transport
from linkmem.client.calls import CALLS, Call
from linkmem.client.transport import ClientSettings
from linkmem.errors import InvalidInput
from linkmem.keys import ApiKey, format_tenant, parse_tenant
from linkmem.transfer import Source, open_export_writer, report_of

Result = dict[str, Any]


class RemoteMemory:
    """A ``Memory`` served by ``linkmem serve`` at ``url`` (or ``$LINKMEM_URL``), with the
    key ``api_key`` (or ``$LINKMEM_API_KEY``). Connections are pooled; a call whose answer
    was lost is retried only when it is idempotent."""

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
    ) -> None:
        self.settings = ClientSettings.resolve(url, api_key, timeout, retries)
        self._http = httpx.Client(**self.settings.client_options())
        self.keys = RemoteKeys(self)

    def _send(self, call: Call) -> Any:
        kwargs, attempt = transport.encode(call), 0
        while True:
            response, error = None, None
            try:
                response = self._http.request(call.method, call.path, **kwargs)
            except httpx.HTTPError as e:
                error = e
            if not transport.again(call, attempt, self.settings.retries, error, response):
                return transport.finish(self.settings, call, error, response)
            time.sleep(transport.backoff(attempt))
            attempt += 1

    # whole files ------------------------------------------------------------------------------
    def export(self, destination: Source, *, batch_size: int = 1000) -> Result:
        """Download the whole collection (admin key) as JSONL to a path or a text file."""
        started = time.perf_counter()
        counts = {"memory": 0, "entity": 0, "link": 0, "history": 0}
        with open_export_writer(destination) as out:
            with self._http.stream("GET", "/v1/export") as response:
                if not response.is_success:
                    response.read()
                    raise transport.error_from(response)
                for line in response.iter_lines():
                    if line:
                        out.write(line + "\n")
                        kind = json.loads(line).get("type")
                        if kind in counts:
                            counts[kind] += 1
        return report_of(destination, counts, started)

    def restore(
        self, source: Source, *, batch_size: int = 1000, progress: Callable | None = None
    ) -> Result:
        """Upload an export (admin key); the server checks it whole before writing."""
        with _upload(source) as body:
            return self._send_file("/v1/restore", body, {"batch_size": batch_size})

    def import_file(
        self,
        path: str | Path,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        batch_size: int = 256,
        skip_existing: bool = False,
    ) -> Result:
        """Import a JSONL file or a conversation (``linkmem.ingest`` formats) on the server."""
        params = {"batch_size": batch_size, "skip_existing": skip_existing}
        params.update(
            {
                k: v
                for k, v in zip(("user_id", "agent_id", "run_id"), (user_id, agent_id, run_id))
                if v is not None
            }
        )
        with _upload(path) as body:
            return self._send_file("/v1/import", body, params)

    def _send_file(self, path: str, body: IO[bytes], params: dict[str, Any]) -> Result:
        try:
            response = self._http.post(path, content=body, params=transport.as_params(params))
        except httpx.HTTPError as e:
            raise transport.unreachable(self.settings, e) from e
        return transport.decode(response)

    # lifecycle --------------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteMemory({self.settings.url!r})"


class RemoteKeys:
    """The server's API keys (an admin key is needed), as ``Memory.keys`` offers them."""

    def __init__(self, memory: RemoteMemory) -> None:
        self._memory = memory

    def create(
        self, tenant: Any = None, role: str = "write", name: str | None = None
    ) -> tuple[ApiKey, str]:
        answer = self._memory._send(
            calls.create_key(format_tenant(parse_tenant(tenant)), role, name)
        )
        return _api_key(answer["key"]), answer["secret"]

    def list(self, include_revoked: bool = False) -> list[ApiKey]:
        answer = self._memory._send(calls.list_keys(include_revoked))
        return [_api_key(row) for row in answer["results"]]

    def revoke(self, key_id: str) -> ApiKey:
        return _api_key(self._memory._send(calls.revoke_key(key_id))["key"])


def _api_key(row: dict[str, Any]) -> ApiKey:
    return ApiKey(**{**row, "tenant": parse_tenant(row["tenant"])})


def _upload(source: Any) -> Any:
    """A binary file object of ``source`` (a path or a file object), closed afterwards."""
    if isinstance(source, str | Path):
        try:
            return Path(source).open("rb")
        except OSError as e:
            raise InvalidInput(f"cannot read {source}: {e.strerror or e}") from e
    if isinstance(source, io.TextIOBase):
        return contextlib.closing(io.BytesIO(source.read().encode("utf-8")))
    if callable(getattr(source, "read", None)):
        return contextlib.nullcontext(source)
    raise InvalidInput(f"source must be a path or a file object, got {type(source).__name__}")


def _remote_call(builder: Callable[..., Call]) -> Callable[..., Any]:
    @functools.wraps(builder)
    def call(self: RemoteMemory, *args: Any, **kwargs: Any) -> Any:
        return self._send(builder(*args, **kwargs))

    return call


for _name, _builder in CALLS.items():
    setattr(RemoteMemory, _name, _remote_call(_builder))
