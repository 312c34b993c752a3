"""The whole linkmem exception hierarchy.

Every error a caller can trigger is a :class:`LinkmemError`; each subclass also inherits the
built-in type callers already catch (``ValueError``, ``LookupError``, ``ImportError``).
Messages name the bad value and say what to do.

Each class carries the HTTP status and the stable ``code`` that the server answers with
(``{"error": {"code", "message"}}``); :func:`error_class` turns a code back into the class,
so a remote client raises exactly what an embedded ``Memory`` would.
"""

from __future__ import annotations


class LinkmemError(Exception):
    """Base class of every linkmem error."""

    http_status = 500
    code = "internal"


class ConfigError(LinkmemError, ValueError):
    """Settings are invalid or contradict each other."""

    http_status = 400
    code = "config_error"


class InvalidInput(LinkmemError, ValueError):
    """A call got an argument it cannot use; nothing was written."""

    http_status = 400
    code = "invalid_input"


class InvalidRequest(InvalidInput):
    """A request to the server did not match its route's schema (not JSON, a missing or an
    unknown field); nothing was read or written."""

    http_status = 422
    code = "invalid_request"


class TooLarge(InvalidInput):
    """A request body is larger than the server accepts; nothing was read or written."""

    http_status = 413
    code = "too_large"


class NotFound(LinkmemError, LookupError):
    """A memory or entity id does not exist (in the given scope)."""

    http_status = 404
    code = "not_found"


class BackendUnavailable(LinkmemError, ImportError):
    """A backend or model needs a package or server that is not there."""

    http_status = 503
    code = "unavailable"


class ModelUnavailable(BackendUnavailable):
    """An embedding model or spaCy pipeline could not be loaded."""

    code = "model_unavailable"


class LLMUnavailable(BackendUnavailable):
    """The LLM endpoint (``[llm]`` settings) could not be reached or kept failing (timeouts,
    429, 5xx after the retries, or a refusal such as a bad key); nothing was written."""

    code = "llm_unavailable"


class LLMInvalidOutput(LinkmemError):
    """The LLM answered, but not with what was asked (not JSON, the wrong shape, an id it was
    never shown); nothing was written."""

    http_status = 502
    code = "llm_invalid_output"


class EmbedderMismatch(LinkmemError):
    """The store was written with a different embedder than the one configured."""

    http_status = 409
    code = "embedder_mismatch"


class MigrationError(LinkmemError):
    """The store's schema cannot be migrated to this version of linkmem."""

    code = "migration_error"


class StoreError(LinkmemError):
    """The storage backend failed; the transaction was rolled back."""

    code = "store_error"


class PermissionDenied(LinkmemError, PermissionError):
    """The caller's tenant or role may not do what it asked; nothing was read or written."""

    http_status = 403
    code = "forbidden"


class Unauthorized(LinkmemError, PermissionError):
    """A server needs an API key and the request had none, or one that is unknown or revoked."""

    http_status = 401
    code = "unauthorized"


def _all_classes(root: type[LinkmemError]) -> list[type[LinkmemError]]:
    found = [root]
    for sub in root.__subclasses__():
        found.extend(_all_classes(sub))
    return found


def error_class(code: str) -> type[LinkmemError]:
    """The exception class whose ``code`` is ``code`` (``LinkmemError`` for unknown codes)."""
    for cls in _all_classes(LinkmemError):
        if cls.code == code:
            return cls
    return LinkmemError
