"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the ``infer=True`` tests.

Each request to ``POST /v1/chat/completions`` takes the next reply of the script: a status,
a body (a chat answer whose content is given, or raw bytes) and an optional delay. Requests
are recorded, so tests can check what linkmem sent (and that no real id ever reached it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant message's content (a 200 chat answer)
    raw: bytes | None = None  # the whole body instead
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.status != 200:
            return json.dumps({"error": {"message": f"scripted {self.status}"}}).encode()
        message = {"role": "assistant", "content": self.content}
        return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


def answer(value: Any) -> Reply:
    """A 200 answer whose content is ``value`` as JSON."""
    return Reply(content=json.dumps(value))


def facts(*items: tuple[str, list[int]] | str) -> Reply:
    """An extraction answer; a bare string is a fact from message 1."""
    out = [{"text": i, "sources": [1]} if isinstance(i, str) else dict(zip(("text", "sources"), i))
           for i in items]  # fmt: skip
    return answer({"facts": out})


def decisions(*items: tuple[str, str, str, str]) -> Reply:
    """A reconciliation answer: ``(fact, event, memory, text)`` per decision."""
    keys = ("event", "memory", "text")
    return answer({"decisions": {d[0]: dict(zip(keys, d[1:])) for d in items}})


class ScriptedLLM:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def settings(self, **extra: Any) -> dict[str, Any]:
        """``llm=`` settings pointing at this server (fast retries for tests)."""
        return {"base_url": self.url, "model": "scripted", "backoff": 0.01, **extra}

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return Reply(500, raw=b'{"error": "script exhausted"}')
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = owner._next(body)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def prompts(self) -> list[str]:
        """The user message of each request, in order."""
        return [r["messages"][-1]["content"] for r in self.requests]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM()
    yield server
    server.stop()
