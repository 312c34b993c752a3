"""Typed settings and the one pure function that merges their layers.

Precedence, lowest to highest: dataclass defaults, the config file
(``$LINKMEM_HOME/config.toml`` or an explicit path), environment variables, explicit keyword
arguments. Importing linkmem writes nothing anywhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from linkmem.errors import ConfigError
from linkmem.retrieval_config import RetrievalConfig


@dataclass(frozen=True)
class EmbedderSettings:
    provider: str = "onnx"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    dim: int | None = None


@dataclass(frozen=True)
class SQLiteSettings:
    path: str | None = None  # None: <home>/memory.db
    #: Bytes of memory vectors, and again of entity vectors, kept in this process's matrix
    #: caches (least recently used scopes are dropped past it and reload on their next use).
    cache_mb: int = 256


@dataclass(frozen=True)
class PostgresSettings:
    dsn: str | None = None
    pool_min: int = 1
    pool_max: int = 8


@dataclass(frozen=True)
class ServerSettings:
    """``linkmem serve``: where it listens and how much it reads per request."""

    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 1
    #: Largest JSON request body; bigger ones are refused with 413 before they are parsed.
    max_body_mb: float = 4.0
    #: Largest body of an import or restore upload (a whole file).
    max_upload_mb: float = 512.0


@dataclass(frozen=True)
class LLMSettings:
    """The chat model behind ``add(..., infer=True)``: any OpenAI-compatible endpoint
    (OpenAI, Ollama, vLLM, LM Studio, llama.cpp's server). Unset ``base_url``: no LLM."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    #: Seconds per request (connect, read); a timeout is retried like a 5xx.
    timeout: float = 60.0
    #: Extra attempts after a 429, a 5xx, a timeout or a refused connection.
    retries: int = 2
    #: First wait between attempts in seconds, doubled each time (a Retry-After header wins,
    #: up to 30 s).
    backoff: float = 0.5
    #: How the answer's JSON shape is enforced: "json_schema" (OpenAI, vLLM, Ollama, LM
    #: Studio, llama.cpp), "json_object" (a schema inside ``{"type": "json_object"}``, as
    #: llama-cpp-python's server takes it), "none" (the prompt only), or "auto": the first,
    #: falling back to the next when the server refuses that shape (400/422, or a 5xx that
    #: names response_format).
    structured: str = "auto"
    temperature: float = 0.0
    max_tokens: int = 1024
    #: Existing memories shown to the reconciliation call per fact (dense top k + BM25 top k,
    #: deduplicated), and at most ``max_candidates`` in all.
    candidates_per_fact: int = 5
    max_candidates: int = 30
    #: An extraction answer with more facts than this is refused as invalid output.
    max_facts: int = 100
    #: System prompts replacing the built-in ones (``linkmem.infer.prompts``), e.g. for a
    #: domain or a small local model; the answer's JSON shape stays the same.
    extract_prompt: str | None = None
    reconcile_prompt: str | None = None


@dataclass(frozen=True)
class McpSettings:
    """``linkmem mcp`` (stdio): the scope its tools are bound to when no flag gives one."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class Settings:
    home: str = ""
    store: str = "sqlite"
    collection: str = "memories"
    sqlite: SQLiteSettings = field(default_factory=SQLiteSettings)
    postgres: PostgresSettings = field(default_factory=PostgresSettings)
    embedder: EmbedderSettings = field(default_factory=EmbedderSettings)
    #: spaCy pipeline name tried before the defaults (None: en_core_web_sm, then the re-upload).
    spacy_pipeline: str | None = None
    #: Entity linking on writes and boosts on reads.
    entities: bool = True
    #: Longest text of one memory or query, in characters. Real chat logs have turns of 70k
    #: characters; a long text is stored and indexed whole for BM25, and the models read its
    #: head and tail (``RetrievalConfig.long_text_*``). Beyond this a write fails with InvalidInput
    #: naming the limit.
    max_text_chars: int = 200_000
    #: Largest metadata of one memory, in bytes of its compact JSON (UTF-8): metadata is
    #: stored and sent with every result, so a stray document in it slows every read.
    max_metadata_bytes: int = 64 * 1024
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    server: ServerSettings = field(default_factory=ServerSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)

    @property
    def sqlite_path(self) -> Path:
        return Path(self.sqlite.path) if self.sqlite.path else Path(self.home) / "memory.db"


#: Environment variables and the settings they set (dotted path into ``Settings``).
ENV_VARS: dict[str, str] = {
    "LINKMEM_STORE": "store",
    "LINKMEM_DB": "sqlite.path",
    "LINKMEM_PG_DSN": "postgres.dsn",
    "LINKMEM_EMBEDDER": "embedder.provider",
    "LINKMEM_EMBEDDER_MODEL": "embedder.model",
    "LINKMEM_EMBEDDER_BASE_URL": "embedder.base_url",
    "LINKMEM_EMBEDDER_API_KEY": "embedder.api_key",
    "LINKMEM_SPACY_PIPELINE": "spacy_pipeline",
    "LINKMEM_COLLECTION": "collection",
    "LINKMEM_LLM_BASE_URL": "llm.base_url",
    "LINKMEM_LLM_MODEL": "llm.model",
    "LINKMEM_LLM_API_KEY": "llm.api_key",
}


def default_home(env: Mapping[str, str]) -> str:
    """``$LINKMEM_HOME``, else the per-user data folder (XDG on Linux)."""
    if env.get("LINKMEM_HOME"):
        return env["LINKMEM_HOME"]
    xdg = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local/share")
    return str(Path(xdg) / "linkmem")


def resolve_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_file: str | Path | None = None,
) -> Settings:
    """Merge defaults < config file < environment < ``overrides`` into one ``Settings``.

    ``overrides`` and the config file use dotted or nested keys: ``{"sqlite.path": ...}`` or
    ``{"sqlite": {"path": ...}}``.
    """
    env = os.environ if env is None else env
    home = default_home(env)
    layers: list[dict[str, Any]] = [{"home": home}]
    path = Path(config_file) if config_file else Path(home) / "config.toml"
    if config_file or path.is_file():
        layers.append(_flatten(_read_toml(path)))
    layers.append({dotted: env[name] for name, dotted in ENV_VARS.items() if env.get(name)})
    layers.append(_flatten(dict(overrides or {})))
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update(layer)
    return _build(Settings, merged, "")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ConfigError(f"config file {path} does not exist; create it or drop --config") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path} is not valid TOML: {e}") from e


def _flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in values.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, dotted + "."))
        elif hasattr(value, "__dataclass_fields__"):
            flat.update(_flatten(_dataclass_items(value), dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _dataclass_items(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _build(cls: type, flat: dict[str, Any], prefix: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    for dotted in flat:
        if dotted.startswith(prefix):
            head = dotted[len(prefix) :].split(".", 1)[0]
            if head not in known:
                valid = ", ".join(sorted(prefix + k for k in known))
                raise ConfigError(f"unknown setting {dotted!r}; valid settings here: {valid}")
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        nested_type = _nested_dataclass(cls, name)
        if nested_type is not None:
            kwargs[name] = _build(nested_type, flat, f"{prefix}{name}.")
        elif prefix + name in flat:
            kwargs[name] = _coerce(flat[prefix + name], f, prefix + name)
    return cls(**kwargs)


_NESTED = {
    "sqlite": SQLiteSettings,
    "postgres": PostgresSettings,
    "embedder": EmbedderSettings,
    "retrieval": RetrievalConfig,
    "server": ServerSettings,
    "mcp": McpSettings,
    "llm": LLMSettings,
}


def _nested_dataclass(cls: type, name: str) -> type | None:
    return _NESTED.get(name) if cls is Settings else None


def _coerce(value: Any, f: Any, dotted: str) -> Any:
    """Environment values arrive as strings; turn them into the field's declared type."""
    declared = str(f.type)
    if not isinstance(value, str) or declared.startswith("str"):
        return value
    try:
        if declared == "bool":
            return value.strip().lower() in {"1", "true", "yes", "on"}
        if declared.startswith("int"):
            return int(value)
        if declared == "float":
            return float(value)
    except ValueError as e:
        raise ConfigError(f"setting {dotted} must be a {declared}, got {value!r}") from e
    return value


def with_retrieval(settings: Settings, **changes: Any) -> Settings:
    """A copy of ``settings`` with some retrieval constants changed (used by ablations)."""
    return replace(settings, retrieval=replace(settings.retrieval, **changes))
