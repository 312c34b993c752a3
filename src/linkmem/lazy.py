"""Module attributes imported on first access (PEP 562), so ``import linkmem`` stays cheap."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any


def load_lazy(package: str, lazy: Mapping[str, str], namespace: dict[str, Any], name: str) -> Any:
    """``name`` from the module ``lazy`` names for it, cached in ``namespace`` (the package's
    globals) so later lookups skip the package's ``__getattr__``."""
    module = lazy.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    namespace[name] = value
    return value
