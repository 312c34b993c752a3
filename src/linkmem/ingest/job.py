"""Writing an import file into a ``Memory``: check it whole, then add it batch by batch.

``skip_existing=True`` makes an import idempotent, so an interrupted or repeated import can
simply be run again. The rule: a message is skipped when a memory with exactly the same
text (as stored: stripped of surrounding whitespace) is already in exactly the same scope
(same ``user_id``, ``agent_id`` and ``run_id``), or was written earlier by the same import.
Role, speaker name and metadata are not compared. Texts are compared by content hash
(BLAKE2b, 128 bits); each scope's stored texts are read once, at its first batch, through
the store's ``memory_ids`` / ``get_memories``. Nothing is added to the memories, so the rule
also recognises memories written by ``add`` or by an import without the option.
"""

from __future__ import annotations

import gzip
import hashlib
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkmem import validation
from linkmem.errors import InvalidInput, PermissionDenied
from linkmem.ingest.records import (
    Batch,
    Record,
    ScopeKey,
    batches,
    check_records,
    read_records,
)
from linkmem.store.base import Store, iter_chunks
from linkmem.tenancy import Tenant
from linkmem.types import SCOPE_KEYS, Scope

if TYPE_CHECKING:
    from linkmem.memory import Memory

Progress = Callable[[int], None]


def content_key(text: str) -> bytes:
    """The content hash that ``skip_existing`` compares."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class ExistingTexts:
    """The content hashes of the texts stored in each exact scope, read once per scope and
    extended with every text this import writes."""

    def __init__(self, store: Store, chunk: int = 1000) -> None:
        self.store = store
        self.chunk = chunk
        self._seen: dict[Scope, set[bytes]] = {}

    def fresh(self, scope: Scope, messages: list[validation.Message]) -> list[validation.Message]:
        """The messages whose text is not in ``scope`` yet; they count as stored from now on."""
        seen = self._scope(scope)
        kept = []
        for message in messages:
            key = content_key(message.content)
            if key not in seen:
                seen.add(key)
                kept.append(message)
        return kept

    def _scope(self, scope: Scope) -> set[bytes]:
        if scope not in self._seen:
            ids = self.store.memory_ids(scope)  # every scope inside it: keep the exact one
            self._seen[scope] = {
                content_key(r.text)
                for chunk in iter_chunks(ids, self.chunk)
                for r in self.store.get_memories(chunk)
                if r.scope == scope
            }
        return self._seen[scope]


@dataclass
class ImportReport:
    records: int = 0
    memories: int = 0
    skipped: int = 0
    batches: int = 0
    started: float = field(default_factory=time.perf_counter)
    per_scope: dict[ScopeKey, int] = field(default_factory=dict)

    def add(self, scope: ScopeKey, written: int, skipped: int) -> None:
        self.memories += written
        self.skipped += skipped
        self.batches += 1
        self.per_scope[scope] = self.per_scope.get(scope, 0) + written

    def kept(self) -> str:
        """What is stored so far, for a message about a stopped import."""
        return f"{self.memories} memories from {self.batches} batches"

    def finish(self) -> dict[str, Any]:
        seconds = time.perf_counter() - self.started
        return {
            "records": self.records,
            "memories": self.memories,
            "skipped": self.skipped,
            "batches": self.batches,
            "seconds": round(seconds, 3),
            "memories_per_second": round(self.memories / seconds, 1) if seconds else None,
            "scopes": [
                {**{k: v for k, v in zip(SCOPE_KEYS, key) if v is not None}, "memories": n}
                for key, n in self.per_scope.items()
            ],
        }


class FileImport:
    """One import of a file (see ``linkmem.ingest.records`` for the formats) into ``memory``.

    ``check()`` validates every record and writes nothing; ``run()`` then writes batches of
    ``batch_size`` records, each one ``add_batch`` call (one transaction). ``report`` is up to
    date after every batch and ``batch`` is the one being written, so a caller can say what
    was kept when a batch fails or the import is interrupted.
    """

    def __init__(
        self,
        memory: Memory,
        path: str | Path,
        scope: dict[str, str | None],
        *,
        batch_size: int = 256,
        skip_existing: bool = False,
        tenant: Tenant | None = None,
    ) -> None:
        if batch_size < 1:
            raise InvalidInput(f"batch size must be at least 1, got {batch_size}")
        self.memory = memory
        self.path = Path(path)
        self.scope = scope
        self.batch_size = batch_size
        self.skip_existing = skip_existing
        self.tenant = tenant
        self.report = ImportReport()
        self.batch: Batch | None = None

    @property
    def max_chars(self) -> int:
        return self.memory.settings.max_text_chars

    def check(self) -> int:
        """Validate the whole file; return how many records it holds."""
        try:
            records = self._records()
            settings = self.memory.settings
            self.report.records = check_records(
                records, settings.max_text_chars, settings.max_metadata_bytes
            )
        except InvalidInput as e:
            raise InvalidInput(f"{e}; nothing was written") from e
        return self.report.records

    def run(self, progress: Progress | None = None) -> dict[str, Any]:
        """Write the records; ``progress(n)`` hears of every ``n`` records done."""
        existing = ExistingTexts(self.memory.store) if self.skip_existing else None
        for batch in batches(self._records(), self.batch_size):
            self.batch = batch
            self._write(batch, existing)
            if progress is not None:
                progress(len(batch.records))
        self.batch = None
        return self.report.finish()

    def _records(self) -> Iterator[Record]:
        """The file's records; with a tenant, each scope pinned to it (``Tenant.pin``), so a
        line naming another tenant's ids is refused by ``check`` before anything is written."""
        for record in read_records(self.path, self.scope):
            if self.tenant is None:
                yield record
                continue
            try:
                pinned = self.tenant.pin(dict(zip(SCOPE_KEYS, record.scope)))
            except PermissionDenied as e:
                raise PermissionDenied(f"{record.where}: {e}; nothing was written") from e
            yield replace(record, scope=tuple(pinned[k] for k in SCOPE_KEYS))

    def _write(self, batch: Batch, existing: ExistingTexts | None) -> None:
        items, metadata = batch.items, [r.metadata for r in batch.records]
        skipped = 0
        if existing is not None:
            items, metadata, skipped = self._fresh(batch, existing)
        written = 0
        if items:
            ids = dict(zip(SCOPE_KEYS, batch.scope))
            result = self.memory.add_batch(items, **ids, metadata=metadata)
            written = len(result["results"])
        self.report.add(batch.scope, written, skipped)

    def _fresh(self, batch: Batch, existing: ExistingTexts) -> tuple[list[Any], list[Any], int]:
        scope = validation.make_scope(*batch.scope)
        items, metadata, skipped = [], [], 0
        for record in batch.records:
            messages = validation.normalise_messages(record.item, self.max_chars)
            kept = existing.fresh(scope, messages)
            skipped += len(messages) - len(kept)
            if kept:
                items.append(record.item if len(kept) == len(messages) else _as_items(kept))
                metadata.append(record.metadata)
        return items, metadata, skipped


def _as_items(messages: list[validation.Message]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content, "name": m.name} for m in messages]


def import_file(
    memory: Memory,
    path: str | Path,
    scope: dict[str, str | None],
    *,
    batch_size: int = 256,
    skip_existing: bool = False,
    progress: Progress | None = None,
    tenant: Tenant | None = None,
) -> dict[str, Any]:
    """Check then write ``path`` into ``memory``; return the import report. With a
    ``tenant``, every record is pinned to its scope (``Tenant.pin``)."""
    job = FileImport(
        memory, path, scope, batch_size=batch_size, skip_existing=skip_existing, tenant=tenant
    )
    job.check()
    return job.run(progress)


def restore_file(
    memory: Memory, path: str | Path, *, batch_size: int = 1000, progress: Progress | None = None
) -> dict[str, Any]:
    """``Memory.restore`` of an export file. A restore from a path checks the whole file
    before writing, so its ``InvalidInput`` errors (a truncated or corrupt gzip stream
    among them) say that nothing was written."""
    try:
        return memory.restore(path, batch_size=batch_size, progress=progress)
    except InvalidInput as e:
        raise InvalidInput(f"{e}; nothing was written") from e
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise InvalidInput(
            f"{path} is a truncated or corrupt gzip file ({e}); use an intact copy of the "
            "export; nothing was written"
        ) from e
