"""Reading an import file into records, and grouping the records into ``add_batch`` calls.

Two formats, each plain or gzipped (recognised by its first bytes, whatever the file name):

* JSONL: one object per line with ``text`` (plus optional ``role``/``name``) or ``messages``,
  optional ``metadata``, and optional ``user_id``/``agent_id``/``run_id`` that override the
  caller's scope for that line.
* A conversation as JSON: a list of ``{"role", "content"[, "name"]}`` messages, or an object
  ``{"messages": [...]}`` (which may carry ``metadata`` and scope ids too). Each non-system
  message becomes one memory.

Every error raised here is an ``InvalidInput`` that names the line (or message) it came from.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from linkmem import validation
from linkmem.errors import InvalidInput
from linkmem.types import SCOPE_KEYS

ScopeKey = tuple[str | None, str | None, str | None]
RECORD_KEYS = frozenset({"text", "messages", "role", "name", "metadata", *SCOPE_KEYS})
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Record:
    where: str  # "line 3" or "message 3", for error messages
    item: Any  # what Memory.add_batch takes as one item
    metadata: dict[str, Any] | None
    scope: ScopeKey


@dataclass
class Batch:
    scope: ScopeKey
    records: list[Record] = field(default_factory=list)

    def kwargs(self) -> dict[str, Any]:
        """``add_batch`` keyword arguments: the scope ids and per-item metadata."""
        return {**dict(zip(SCOPE_KEYS, self.scope)), "metadata": [r.metadata for r in self.records]}

    @property
    def items(self) -> list[Any]:
        return [r.item for r in self.records]

    @property
    def span(self) -> str:
        first, last = self.records[0].where, self.records[-1].where
        return first if first == last else f"{first} to {last.split()[-1]}"


def read_records(path: Path, scope: dict[str, str | None]) -> Iterator[Record]:
    """The records of ``path`` in file order; JSONL is streamed, not loaded whole."""
    if _is_jsonl(path):
        yield from _jsonl_records(path, scope)
    else:
        yield from _document_records(path, scope)


def check_records(records: Iterator[Record], max_chars: int, max_metadata_bytes: int) -> int:
    """Validate every record the way ``Memory.add_batch`` will; return how many there are."""
    count = 0
    for record in records:
        try:
            validation.normalise_messages(record.item, max_chars)
            validation.validate_metadata(record.metadata, max_metadata_bytes)
            validation.make_scope(*record.scope)
        except InvalidInput as e:
            raise InvalidInput(f"{record.where}: {e}") from e
        count += 1
    return count


def batches(records: Iterator[Record], size: int) -> Iterator[Batch]:
    """Batches of at most ``size`` records that share one scope, in file order per scope."""
    if size < 1:
        raise InvalidInput(f"batch size must be at least 1, got {size}")
    open_batches: dict[ScopeKey, Batch] = {}
    for record in records:
        batch = open_batches.setdefault(record.scope, Batch(record.scope))
        batch.records.append(record)
        if len(batch.records) >= size:
            yield open_batches.pop(record.scope)
    yield from open_batches.values()


# files -----------------------------------------------------------------------------------------
def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes (its name does not matter)."""
    try:
        with path.open("rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}") from e


@contextmanager
def open_binary(path: Path) -> Iterator[IO[bytes]]:
    """The file's bytes, gunzipped when it is gzip; a truncated or corrupt gzip stream is an
    ``InvalidInput`` that says so."""
    gz = is_gzip(path)
    try:
        with gzip.open(path, "rb") if gz else path.open("rb") as f:
            yield f
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise InvalidInput(
            f"{path} is a truncated or corrupt gzip file ({e}); use an intact copy"
        ) from e
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror or e}") from e


def _is_jsonl(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".ndjson")):
        return True
    if name.endswith(".json"):
        return False
    with open_binary(path) as f:
        first = next((line for line in f if line.strip()), b"")
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep or too long
        return False  # a pretty-printed document (or not JSON at all: reported later)


_unparsable = "JSON that cannot be read (nested too deep, or a number with too many digits)"


def _jsonl_records(path: Path, scope: dict[str, str | None]) -> Iterator[Record]:
    with open_binary(path) as f:
        for number, raw in enumerate(f, 1):
            where = f"line {number}"
            try:
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                data = json.loads(line)
            except UnicodeDecodeError as e:
                raise InvalidInput(f"{where}: not UTF-8 text") from e
            except json.JSONDecodeError as e:
                raise InvalidInput(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from e
            except (ValueError, RecursionError) as e:
                raise InvalidInput(f"{where}: {_unparsable}") from e
            yield _record(data, where, scope)


def _document_records(path: Path, scope: dict[str, str | None]) -> Iterator[Record]:
    with open_binary(path) as f:
        try:
            data = json.load(f)
        except UnicodeDecodeError as e:
            raise InvalidInput(f"{path} is not UTF-8 text") from e
        except json.JSONDecodeError as e:
            raise InvalidInput(
                f"{path} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
                "use JSONL (one object per line) or a JSON list of messages"
            ) from e
        except (ValueError, RecursionError) as e:
            raise InvalidInput(f"{path}: {_unparsable}") from e
    if isinstance(data, list):
        data = {"messages": data}
    if not isinstance(data, dict):
        raise InvalidInput(
            f"{path}: expected a list of messages or an object, got {type(data).__name__}"
        )
    if "messages" not in data:
        yield _record(data, "document", scope)
        return
    doc = _record(data, "document", scope)
    for index, message in enumerate(doc.item, 1):
        if isinstance(message, dict) and message.get("role") == "system":
            continue  # context, not a memory (add() skips these too)
        yield Record(f"message {index}", message, doc.metadata, doc.scope)


def _record(data: Any, where: str, scope: dict[str, str | None]) -> Record:
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - RECORD_KEYS)
    if unknown:
        raise InvalidInput(
            f"{where}: unknown key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(RECORD_KEYS))}"
        )
    if ("text" in data) == ("messages" in data):
        raise InvalidInput(f"{where}: needs exactly one of 'text' or 'messages'")
    if "messages" in data:
        if not isinstance(data["messages"], list):
            raise InvalidInput(f"{where}: 'messages' must be a list of {{role, content}} objects")
        item: Any = data["messages"]
    else:
        item = data["text"]  # a plain string, so errors talk about "text"
        if "role" in data or "name" in data:
            item = {
                "role": data.get("role", "user"),
                "content": data["text"],
                "name": data.get("name"),
            }
    ids = {**scope, **{k: data[k] for k in SCOPE_KEYS if k in data}}
    return Record(where, item, data.get("metadata"), tuple(ids.get(k) for k in SCOPE_KEYS))
