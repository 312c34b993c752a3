"""Importing memories from files: the parsing and the writing that every shell shares.

``linkmem import`` (CLI) and any other front end call ``FileImport`` (or ``import_file``):
``linkmem.ingest.records`` reads JSONL or a conversation JSON (plain or gzipped) into
validated records; ``linkmem.ingest.job`` writes them with ``Memory.add_batch``, optionally
skipping texts already stored in the scope (``skip_existing``; the rule is in that module);
``restore_file`` restores a ``linkmem export`` file.
"""

from __future__ import annotations

from linkmem.ingest.job import (
    ExistingTexts,
    FileImport,
    ImportReport,
    content_key,
    import_file,
    restore_file,
)
from linkmem.ingest.records import (
    Batch,
    Record,
    batches,
    check_records,
    is_gzip,
    open_binary,
    read_records,
)

__all__ = [
    "Batch",
    "ExistingTexts",
    "FileImport",
    "ImportReport",
    "Record",
    "batches",
    "check_records",
    "content_key",
    "import_file",
    "is_gzip",
    "open_binary",
    "read_records",
    "restore_file",
]
