"""The adds of one write transaction, for carrying the search caches across them.

A scope's entity cache entry (and on PostgreSQL its rows and near rows) is held at its
``(ent_version, mem_version)``, which every write moves on. A transaction whose writes to a
scope were adds alone (memories, their postings, entities, links to them) changed nothing
a held entry says but about the entities it wrote, so its entries are carried to the
versions it leaves (``postgres.write_follow``, ``sqlite.write_follow``): each backend notes
the scope's stamp as its first add found it, the entities written, and any other write
(``spoil``); reads the stamps again just before the commit; and, after it, carries the
scopes whose rewrite counts (deleted or changed memory and entity vectors and postings, kept
by triggers) did not move. Other processes' adds are carried likewise, from a log each
backend's transactions of adds alone write (``ScopeLog``; ``postgres.add_log``,
``sqlite.add_log``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: A scope's (ent_version, mem_version), then its rewrite counts.
Stamp = tuple[int, ...]
#: A scope's (ent_version, mem_version).
Versions = tuple[int, int]
#: The ``HopIndex`` bound the rows were read for, and the own links of the written entities
#: that it now holds (None: not read, the index goes).
HopRows = tuple[int, list[tuple[str, str]]] | None
#: The memories each entity was linked to: entity id -> memory ids.
Linked = dict[str, set[str]]


@dataclass
class Following:
    """One transaction's adds: each scope's stamp as first written, the entities written
    and, of those it linked, the memories it linked each to."""

    before: dict[int, Stamp] = field(default_factory=dict)
    entities: set[str] = field(default_factory=set)
    linked: Linked = field(default_factory=dict)
    spoiled: bool = False

    def links(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Note (memory id, entity id) links written."""
        for memory_id, entity_id in pairs:
            self.entities.add(entity_id)
            self.linked.setdefault(entity_id, set()).add(memory_id)

    def began(self, scope_id: int, stamp: Stamp) -> bool:
        """Note a scope's stamp before this transaction's first add to it; whether this is
        the transaction's first followed scope."""
        first = not self.before
        self.before.setdefault(scope_id, tuple(stamp))
        return first and not self.spoiled

    def carried(self, after: dict[int, Stamp]) -> list[tuple[int, Versions, Versions]]:
        """The scopes to carry (none when spoiled): those whose rewrite counts did not move,
        with their versions before and ``after``."""
        if self.spoiled:
            return []
        return [
            (scope_id, (stamp[0], stamp[1]), (after[scope_id][0], after[scope_id][1]))
            for scope_id, stamp in self.before.items()
            if scope_id in after and after[scope_id][2:] == stamp[2:]
        ]


@dataclass(frozen=True)
class LoggedAdds:
    """What adds wrote to a scope: the entities linked or inserted, and the memories each
    linked one was linked to (``Following.linked``)."""

    entities: set[str]
    linked: Linked


class ScopeLog:
    """One scope's versions now and its logged adds (versions before -> after, the entities
    written, the (memory id, entity id) links written)."""

    def __init__(self) -> None:
        self.now: Versions | None = None
        self.steps: dict[Versions, tuple[Versions, list[str], list[tuple[str, str]]]] = {}
        self.hop_links: list[tuple[str, str]] = []

    def walk(self, held: Versions) -> LoggedAdds | None:
        """What was written from ``held`` to the versions now, None when the log does not
        chain from one to the other (a write that was not adds alone between)."""
        adds = LoggedAdds(set(), {})
        at = held
        for _ in range(len(self.steps)):  # each step at most once
            if at == self.now:
                break
            step = self.steps.get(at)
            if step is None:
                return None
            at, entities, links = step
            adds.entities.update(entities)
            for memory_id, entity_id in links:
                adds.linked.setdefault(entity_id, set()).add(memory_id)
        return adds if at == self.now else None


def link_pairs(linked: Linked) -> list[tuple[str, str]]:
    """``linked`` as (memory id, entity id) pairs, in order (what a log row keeps)."""
    return sorted((m, e) for e, memories in linked.items() for m in memories)


def behind(held: Versions, now: Versions) -> bool:
    """Whether a cache entry at ``held`` is older than the scope ``now``."""
    return held != now and held[0] <= now[0] and held[1] <= now[1]
