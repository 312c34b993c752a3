"""Collection names: one rule for every backend.

A collection name is case-insensitive: ``"Notes"`` and ``"notes"`` name the same collection on
SQLite and on PostgreSQL. Backends get it folded to lower case, the form PostgreSQL gives
unquoted names and the one SQLite's case-insensitive table names compare equal to, so the two
spellings share tables, migrations and metadata everywhere instead of colliding on one backend
and not on the other.
"""

from __future__ import annotations

import re

from linkmem.errors import ConfigError

#: Letters, digits and _, not starting with a digit; short enough for every table and index
#: name built from it to stay within PostgreSQL's 63-byte identifiers.
_COLLECTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")


def check_collection(name: object) -> str:
    """The collection's canonical name (lower case); ``ConfigError`` for an invalid one."""
    if not isinstance(name, str) or not _COLLECTION.match(name):
        raise ConfigError(
            f"collection {name!r} is not a valid name: use letters, digits and _ "
            "(at most 41 characters, not starting with a digit; case does not matter)"
        )
    return name.lower()
