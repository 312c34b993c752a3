"""glibc's allocator settings for a long-running server process.

A server frees and reallocates large buffers (query and scope matrices, JSON bodies) on many
threads. glibc raises its mmap threshold after the first large free, after which such buffers
come from per-thread arenas that fragment: RSS crept up under a mixed add/search load
(benchmarks/README.md, "RSS growth under a mixed load"). A fixed threshold returns large
buffers to the system when freed, and fewer arenas bound the fragmentation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger("linkmem.server")

M_MMAP_THRESHOLD = -3  # from glibc's malloc.h
M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024
ARENA_MAX = 2


def tune_allocator() -> bool:
    """Apply the settings when the C library is glibc; True when it was."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        return False
    applied = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    applied = mallopt(M_ARENA_MAX, ARENA_MAX) == 1 and applied
    if not applied:
        log.warning("could not set glibc's malloc options; RSS may creep up under load")
    return applied
