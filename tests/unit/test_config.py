"""The settings layers and their precedence."""

from __future__ import annotations

import pytest

from linkmem import ConfigError
from linkmem.config import resolve_settings


def test_defaults_use_the_home_folder(tmp_path):
    s = resolve_settings(env={"LINKMEM_HOME": str(tmp_path)})
    assert s.store == "sqlite" and s.sqlite_path == tmp_path / "memory.db"
    assert s.embedder.provider == "onnx"


def test_xdg_data_home_without_linkmem_home(tmp_path):
    s = resolve_settings(env={"XDG_DATA_HOME": str(tmp_path)})
    assert s.sqlite_path == tmp_path / "linkmem" / "memory.db"


def test_precedence_defaults_file_env_kwargs(tmp_path):
    (tmp_path / "config.toml").write_text(
        'collection = "from_file"\nstore = "sqlite"\n[retrieval]\npool_min = 7\n'
        '[sqlite]\npath = "file.db"\n'
    )
    env = {"LINKMEM_HOME": str(tmp_path), "LINKMEM_DB": "env.db"}
    s = resolve_settings(env=env)
    assert s.collection == "from_file" and s.retrieval.pool_min == 7
    assert str(s.sqlite_path) == "env.db"  # env beats file
    s = resolve_settings({"sqlite": {"path": "kw.db"}, "retrieval.pool_min": 9}, env=env)
    assert str(s.sqlite_path) == "kw.db" and s.retrieval.pool_min == 9


def test_unknown_setting_names_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError, match="valid settings"):
        resolve_settings({"stroe": "sqlite"}, env={"LINKMEM_HOME": str(tmp_path)})
    with pytest.raises(ConfigError, match="retrieval.pool_min"):
        resolve_settings({"retrieval.pool_mn": 1}, env={"LINKMEM_HOME": str(tmp_path)})


def test_bad_config_file(tmp_path):
    (tmp_path / "config.toml").write_text("this is = = not toml")
    with pytest.raises(ConfigError, match="TOML"):
        resolve_settings(env={"LINKMEM_HOME": str(tmp_path)})


def test_unknown_store_lists_registered_ones(tmp_path):
    from linkmem.store.registry import load_store_class

    with pytest.raises(ConfigError, match="postgres, sqlite"):
        load_store_class("mongo")


def test_missing_postgres_extra_says_what_to_install(monkeypatch):
    import sys

    from linkmem import BackendUnavailable
    from linkmem.store.registry import load_store_class

    monkeypatch.setitem(sys.modules, "psycopg", None)
    for name in [m for m in sys.modules if m.startswith("linkmem.store.postgres")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(BackendUnavailable, match=r"linkmem\[postgres\]"):
        load_store_class("postgres")
