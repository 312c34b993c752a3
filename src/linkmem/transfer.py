"""Export and restore for ``Memory``: a whole collection to a JSONL file and back, losslessly.

The format is described in ``linkmem.store.transfer``. A path ending in ``.gz`` is gzipped.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, Any

from linkmem.errors import InvalidInput
from linkmem.store.base import Store
from linkmem.store.transfer import FORMAT
from linkmem.validation import shown, validate_batch_size

Result = dict[str, Any]
Source = str | Path | IO[str]
Progress = Callable[[int], None]


def _open_text(path: Path, mode: str, gz: bool | None = None) -> IO[str]:
    """A UTF-8 text file, gzipped when ``gz`` (default: the name ends in ``.gz``)."""
    try:
        if path.suffix == ".gz" if gz is None else gz:
            return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
        return path.open(mode, encoding="utf-8")
    except OSError as e:
        raise InvalidInput(f"cannot open {shown(str(path), 200)}: {e.strerror}") from e
    except ValueError as e:  # a NUL in the path, or a character the file system cannot name
        raise InvalidInput(f"cannot open {shown(str(path), 200)}: {e}; fix the path") from e


@contextmanager
def open_export_writer(destination: Source) -> Iterator[IO[str]]:
    """Where an export is written (checked first): the file object itself, or a temporary
    file next to the path, renamed over it only when the whole export was written."""
    _check_destination(destination)
    if not isinstance(destination, str | Path):
        yield destination
        return
    path = Path(destination)
    partial = path.with_name(path.name + ".partial")
    out = _open_text(partial, "w", gz=path.suffix == ".gz")
    try:
        with out:
            yield out
        os.replace(partial, path)
    except OSError as e:  # the disk filled up as the file closed, or the rename failed
        raise InvalidInput(f"cannot write {shown(str(path), 200)}: {e}") from e
    finally:
        partial.unlink(missing_ok=True)


def read_rows(lines: Iterable[str]) -> Iterator[Any]:
    """One decoded JSON value per non-blank line; errors name the row."""
    for number, line in enumerate(_nonblank(lines), 1):
        try:
            yield json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidInput(f"row {number}: not valid JSON ({e.msg} at column {e.colno})") from e
        except (ValueError, RecursionError) as e:  # bad UTF-8, huge numbers, deep nesting
            raise InvalidInput(f"row {number}: not readable JSON ({shown(str(e), 100)})") from e


#: What reading a file can raise: not UTF-8, a broken gzip, closed or not readable.
_READ_ERRORS = (ValueError, EOFError, OSError, zlib.error)


def _nonblank(lines: Iterable[str]) -> Iterator[str]:
    """The non-blank lines; a file that cannot be read as UTF-8 text is ``InvalidInput``."""
    try:
        iterator = iter(lines)
    except _READ_ERRORS as e:
        raise _unreadable(e) from e
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except _READ_ERRORS as e:
            raise _unreadable(e) from e
        if line.strip():
            yield line


def _unreadable(error: Exception) -> InvalidInput:
    return InvalidInput(
        f"cannot read the export ({error}); pass a readable file written by `linkmem export` "
        "(UTF-8 JSONL, gzipped when the name ends in .gz)"
    )


def _check_destination(value: Any) -> None:
    """A path that names a regular file or none yet (the export is renamed over it), or a
    file object to write to."""
    _check_file_object(value, "destination", "write")
    path = Path(value) if isinstance(value, str | Path) else None
    if path is not None and (not path.name or (_exists(path) and not path.is_file())):
        raise InvalidInput(
            f"destination {shown(str(value))} is not a regular file; pass a file path"
        )


def _check_file_object(value: Any, what: str, method: str) -> None:
    """A path, or a file object with ``method`` (read or write)."""
    if not isinstance(value, str | Path) and not callable(getattr(value, method, None)):
        raise InvalidInput(
            f"{what} must be a path or a text file object with .{method}(), got "
            f"{type(value).__name__}"
        )


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a NUL in the path: refused when it is opened
        return False


@contextmanager
def _reader(source: Source) -> Iterator[Iterator[Any]]:
    if isinstance(source, str | Path):
        with _open_text(Path(source), "r") as f:
            yield read_rows(f)
    else:
        yield read_rows(source)


def export_header(path: str | Path) -> dict[str, Any] | None:
    """The header row when the file is a linkmem export, else None."""
    try:
        with _open_text(Path(path), "r") as f:
            first = next((line for line in f if line.strip()), "")
        row = json.loads(first)
    except (OSError, InvalidInput, UnicodeDecodeError, json.JSONDecodeError, EOFError):
        return None
    is_header = isinstance(row, dict) and row.get("type") == "header"
    return row if is_header and row.get("format") == FORMAT else None


def _counted(rows: Iterator[Any], progress: Progress | None, every: int = 500) -> Iterator[Any]:
    """The rows, calling ``progress(n)`` every ``every`` rows and at the end."""
    pending = 0
    for row in rows:
        yield row
        pending += 1
        if progress is not None and pending >= every:
            progress(pending)
            pending = 0
    if progress is not None and pending:
        progress(pending)


def _rewindable(source: Source) -> bool:
    if isinstance(source, str | Path):
        return True
    try:
        return source.seekable()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False


class Transfer:
    """Mixed into ``Memory``: ``export`` and ``restore``."""

    store: Store

    def export(self, destination: Source, *, batch_size: int = 1000) -> Result:
        """Write this whole collection (memories with vectors, entities, links, history) as
        JSONL to a path or a text file object; ``restore`` reads it into any backend."""
        started = time.perf_counter()
        batch_size = validate_batch_size(batch_size)
        counts = {"memory": 0, "entity": 0, "link": 0, "history": 0}
        rows = self.store.export_records(batch_size)
        with (
            open_export_writer(destination) as out,
            closing(rows),
        ):  # a failed write ends the snapshot
            for row in rows:
                _write_row(out, row)
                if row["type"] in counts:
                    counts[row["type"]] += 1
        return report_of(destination, counts, started)

    def restore(
        self, source: Source, *, batch_size: int = 1000, progress: Progress | None = None
    ) -> Result:
        """Read an export into this collection, keeping ids, timestamps, vectors, entities,
        links and history. Every row, the embedder and the ids are checked first (for a
        path or a seekable file): on any problem nothing is written. Then the rows are
        written ``batch_size`` per transaction; ``progress(n)`` is told of rows read."""
        started = time.perf_counter()
        _check_file_object(source, "source", "read")
        batch_size = validate_batch_size(batch_size)
        if progress is not None and not callable(progress):
            raise InvalidInput(f"progress must be a function or None, got {shown(progress)}")
        if _rewindable(source):
            start = None if isinstance(source, str | Path) else source.tell()
            with _reader(source) as rows:
                self.store.import_records(rows, batch_size, dry_run=True)
            if start is not None:
                source.seek(start)  # type: ignore[union-attr]
        with _reader(source) as rows:
            counts = self.store.import_records(_counted(rows, progress), batch_size)
        return report_of(source, counts, started)


#: Line breaks to ``str.splitlines`` that JSON leaves as they are; escaped (which JSON allows,
#: as they can only stand in strings), every row is one line to any reader.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _one_line(text: str) -> str:
    if any(char in text for char in _LINE_BREAKS):
        return text.translate(str.maketrans(_LINE_BREAKS))
    return text


def _write_row(out: IO[str], row: dict[str, Any]) -> None:
    try:
        out.write(_one_line(json.dumps(row, ensure_ascii=False, separators=(",", ":"))) + "\n")
    except UnicodeEncodeError as e:
        which = row.get("id") or row.get("memory_id")
        raise InvalidInput(
            f"{row['type']} {which!r} holds a lone surrogate, which is not valid Unicode (an "
            "older linkmem stored it); update or delete it, then export again"
        ) from e
    except (OSError, ValueError, TypeError) as e:  # closed, read-only, binary, disk full
        raise InvalidInput(
            f"cannot write the export ({e}); pass a path or a text file open for writing"
        ) from e


def report_of(where: Source, counts: dict[str, int], started: float) -> Result:
    """What ``export`` and ``restore`` return: the path, the rows of each kind, seconds."""
    seconds = time.perf_counter() - started
    return {
        "path": str(where) if isinstance(where, str | Path) else None,
        "memories": counts["memory"],
        "entities": counts["entity"],
        "links": counts["link"],
        "history": counts["history"],
        "seconds": round(seconds, 3),
    }
