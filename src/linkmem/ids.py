"""Ids of new memories and entities: UUIDs (RFC 9562, version 7) that sort in the order this
process made them.

A search orders results of exactly equal score by id (``rank.fusion``), as do the stores'
reads that cut a list at k. With random ids (version 4) two builds of the same store from the
same writes ordered such ties differently; with ids that sort by creation, equal scores come
in the order the memories were written, in every build. Layout: 48 bits of Unix time in
milliseconds, the version, a 12-bit counter (RFC 9562's dedicated counter: ids made within
one millisecond, or in one batch, still ascend; past 4,096 it carries into the time), the
variant and 62 random bits, so ids stay unguessable.

``_LOCK`` is a leaf: held only to draw the next counter values, no other lock taken under it.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

_LOCK = threading.Lock()
_last = 0  # the (milliseconds << 12 | counter) of the last id this process made
_COUNTER_BITS = 12
_RANDOM_BITS = 62


def new_ids(n: int) -> list[str]:
    """``n`` new ids, ascending, each above every id this process made before."""
    global _last
    with _LOCK:
        first = max(time.time_ns() // 1_000_000 << _COUNTER_BITS, _last + 1)
        _last = first + n - 1
    noise = int.from_bytes(os.urandom(8 * n), "big") if n else 0
    out = []
    for i in range(n):
        stamp = first + i
        random = noise >> (64 * i) & ((1 << _RANDOM_BITS) - 1)
        value = (
            (stamp >> _COUNTER_BITS) << 80
            | 0x7 << 76
            | (stamp & ((1 << _COUNTER_BITS) - 1)) << 64
            | 0b10 << 62
            | random
        )
        out.append(str(uuid.UUID(int=value)))
    return out


def new_id() -> str:
    """One new id (``new_ids``)."""
    return new_ids(1)[0]
