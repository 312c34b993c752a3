"""Store names -> classes: the built-ins and the ``linkmem.stores`` entry-point group."""

from __future__ import annotations

import importlib
from typing import Any

from linkmem.errors import BackendUnavailable, ConfigError
from linkmem.store.base import Store

BUILTIN = {
    "sqlite": "linkmem.store.sqlite:SQLiteStore",
    "postgres": "linkmem.store.postgres:PostgresStore",
}
_EXTRAS = {"postgres": "postgres"}


def available() -> dict[str, str]:
    """Every registered store name and the ``module:Class`` it loads."""
    from importlib.metadata import entry_points  # ~50 ms: only when a name is not built in

    names = dict(BUILTIN)
    for ep in entry_points(group="linkmem.stores"):
        names.setdefault(ep.name, ep.value)
    return names


def load_store_class(name: str) -> Any:
    target = BUILTIN.get(name) or available().get(name)
    if target is None:
        names = ", ".join(sorted(available()))
        raise ConfigError(f"unknown store {name!r}; valid stores: {names}")
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        extra = _EXTRAS.get(name, name)
        raise BackendUnavailable(
            f"the {name} store needs extra packages ({e.name or e}); "
            f"run: pip install 'linkmem[{extra}]'"
        ) from e
    return getattr(module, attr)


def open_store(settings: Any, dim: int) -> Store:
    """Open the store named by ``settings.store`` for vectors of ``dim`` dimensions."""
    return load_store_class(settings.store).from_settings(settings, dim)
