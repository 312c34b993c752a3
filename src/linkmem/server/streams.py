"""Files in and out of the server: an upload spooled to a temporary file (import, restore
read a path, so they check the whole file before writing), and an export streamed as it is
written."""

from __future__ import annotations

import os
import queue
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import Request

if TYPE_CHECKING:
    from linkmem.memory import Memory

_END = None
_CHUNK = 64 * 1024


@asynccontextmanager
async def received_file(request: Request) -> AsyncIterator[Path]:
    """The request body in a temporary file, removed afterwards."""
    fd, name = tempfile.mkstemp(prefix="linkmem-upload-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            async for chunk in request.stream():
                out.write(chunk)
        yield path
    finally:
        path.unlink(missing_ok=True)


class _QueueWriter:
    """A text file object whose writes go, in chunks, to a bounded queue."""

    def __init__(self, chunks: queue.Queue[bytes | None], stop: threading.Event) -> None:
        self.chunks = chunks
        self.stop = stop
        self.buffer: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        if self.stop.is_set():
            raise OSError("the client went away")
        self.buffer.append(text)
        self.size += len(text)
        if self.size >= _CHUNK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self.buffer:
            self._put("".join(self.buffer).encode("utf-8"))
            self.buffer, self.size = [], 0

    def _put(self, chunk: bytes) -> None:
        while not self.stop.is_set():
            try:
                self.chunks.put(chunk, timeout=0.5)
                return
            except queue.Full:
                continue
        raise OSError("the client went away")


def stream_export(memory: Memory) -> Iterator[bytes]:
    """``memory.export`` run in a thread, its output yielded as it is written. A client that
    disconnects ends the export (its snapshot is released)."""
    chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=16)
    stop = threading.Event()
    failure: list[BaseException] = []

    def produce() -> None:
        writer = _QueueWriter(chunks, stop)
        try:
            memory.export(writer)
            writer.flush()
        except BaseException as e:  # reported to the reader below
            failure.append(e)
        finally:
            chunks.put(_END)

    thread = threading.Thread(target=produce, name="linkmem-export", daemon=True)
    thread.start()
    try:
        while (chunk := chunks.get()) is not _END:
            yield chunk
        if failure and not stop.is_set():
            raise failure[0]
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            try:
                chunks.get(timeout=0.1)
            except queue.Empty:
                pass
