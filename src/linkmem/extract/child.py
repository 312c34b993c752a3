"""One ``extract_batch`` call in a child process: a cold ``linkmem search`` imports and loads
spaCy there while the command's own process imports the CLI, opens the store and loads the
ONNX session.

Imports hold the GIL, so a thread cannot overlap spaCy's (~0.5 s) with the CLI's and
onnxruntime's; a second process can, on a second core. The child starts importing spaCy at
once, then reads one request (the pipeline name and the texts) from stdin, writes the
entities as one JSON line to stdout and exits. Same code and pipeline, so the same entities;
any failure (no pipeline, a crash) makes :meth:`ChildExtraction.receive` return None and the
caller extracts in-process, which raises what it raises.

    python -m linkmem.extract.child   # the child's side (reads stdin)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from linkmem.extract.base import EntityKind, ExtractedEntity

#: Seconds to wait for the child's answer before extracting in-process instead (a cold
#: child answers in about a second; this only bounds a child that hangs).
ANSWER_TIMEOUT = 30.0


class ChildExtraction:
    """A child process that will answer one ``extract_batch`` (see the module docstring)."""

    def __init__(self) -> None:
        source = str(Path(__file__).resolve().parents[2])  # the linkmem this process runs
        path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "linkmem.extract.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path},
        )
        #: The texts asked for, once :meth:`send` was called.
        self.texts: list[str] | None = None

    def send(self, pipeline: str | None, texts: Sequence[str]) -> None:
        """Ask for the entities of ``texts`` with ``pipeline`` (answered by :meth:`receive`)."""
        self.texts = list(texts)
        request = json.dumps({"pipeline": pipeline, "texts": self.texts}) + "\n"
        stdin, self._process.stdin = self._process.stdin, None  # communicate() reads only
        try:
            assert stdin is not None
            stdin.write(request.encode("utf-8"))
            stdin.close()
        except OSError:  # the child died: receive() says so
            pass

    def receive(self) -> list[list[ExtractedEntity]] | None:
        """The entities the child found, or None when it failed (it has exited either way)."""
        try:
            out, _ = self._process.communicate(timeout=ANSWER_TIMEOUT)
            reply = json.loads(out or b"{}")
        except (OSError, ValueError, subprocess.TimeoutExpired):
            reply = {}
        finally:
            self.close()
        rows = reply.get("entities") if isinstance(reply, dict) else None
        if not isinstance(rows, list) or self.texts is None or len(rows) != len(self.texts):
            return None
        return [[ExtractedEntity(text, EntityKind(kind)) for text, kind in row] for row in rows]

    def close(self) -> None:
        """End the child (its answer, if any, was read or is not wanted) and reap it."""
        if self._process.poll() is None:
            self._process.kill()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        self._process.wait()


def serve(requests: IO[bytes], replies: IO[bytes]) -> int:
    """The child's side: import spaCy and load the pipeline the environment names (the
    request, which names the one the settings chose, usually comes later: loading it first
    overlaps the parent's work), then answer one request (0: answered or none came)."""
    from linkmem.extract.pipeline import import_spacy, load_pipeline

    import_spacy()
    try:
        load_pipeline(os.environ.get("LINKMEM_SPACY_PIPELINE") or None)
    except Exception:  # the requested pipeline is loaded (or fails) below
        pass
    line = requests.readline()
    if not line:
        return 0
    request = json.loads(line)
    try:
        from linkmem.extract.spacy import SpacyEntityExtractor

        found = SpacyEntityExtractor(request["pipeline"]).extract_batch(request["texts"])
        reply: dict[str, Any] = {"entities": [[[e.text, e.kind.value] for e in r] for r in found]}
    except Exception as exc:  # reported as a failed answer; the parent extracts itself
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    replies.write((json.dumps(reply) + "\n").encode("utf-8"))
    replies.flush()
    return 0 if "entities" in reply else 1


if __name__ == "__main__":
    # The answer is flushed: exit now, without the interpreter's teardown of everything
    # spaCy made (~0.4 s), which the parent would wait for.
    os._exit(serve(sys.stdin.buffer, sys.stdout.buffer))
