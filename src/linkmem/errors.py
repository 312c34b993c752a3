"""The whole linkmem exception hierarchy.

Every error a caller can trigger is a :class:`LinkmemError`; each subclass also inherits the
built-in type callers already catch (``ValueError``, ``LookupError``, ``ImportError``).
Messages name the bad value and say what to do.
"""

from __future__ import annotations


class LinkmemError(Exception):
    """Base class of every linkmem error."""

    http_status = 500


class ConfigError(LinkmemError, ValueError):
    """Settings are invalid or contradict each other."""

    http_status = 400


class InvalidInput(LinkmemError, ValueError):
    """A call got an argument it cannot use; nothing was written."""

    http_status = 422


class NotFound(LinkmemError, LookupError):
    """A memory or entity id does not exist (in the given scope)."""

    http_status = 404


class BackendUnavailable(LinkmemError, ImportError):
    """A backend or model needs a package or server that is not there."""

    http_status = 503


class ModelUnavailable(BackendUnavailable):
    """An embedding model or spaCy pipeline could not be loaded."""


class EmbedderMismatch(LinkmemError):
    """The store was written with a different embedder than the one configured."""

    http_status = 409


class MigrationError(LinkmemError):
    """The store's schema cannot be migrated to this version of linkmem."""


class StoreError(LinkmemError):
    """The storage backend failed; the transaction was rolled back."""


class PermissionDenied(LinkmemError, PermissionError):
    """The caller's tenant may not reach the scope it asked for; nothing was read or written."""

    http_status = 403
