"""The ONNX model as onnxruntime optimises it, saved once so later processes skip optimising.

Every session built from the shipped model optimises its graph again (node fusions, and
constant folding that turns the int8 embedding table into float32): about 0.1-0.15 s of a
cold ``linkmem search``. The first session saves its optimised graph under
``$LINKMEM_HOME/cache/``; later sessions open that file with optimisations off and give
identical vectors. The graph is saved at the "extended" level, which holds no
hardware-specific layout (for this model it is byte-identical to the "all" level).

The weights (tensors of ``WEIGHTS_MIN_BYTES`` or more) are saved beside the graph in a file
of their own, which onnxruntime maps into memory instead of reading and copying them: opening
the cached model takes 22 instead of 49 ms of CPU and its process peaks 24 MB lower (87 vs
111 MB), and the pages of the word table a process never reads are never loaded. Each writer
names its weights file after its own temporary file, so two processes writing the same entry
never write one file, and a graph always names the weights it was saved with.

The file name holds the model file's size and modification time, the onnxruntime version
and the machine type, so a new model or runtime writes a new file (and removes the older
ones). It is written under a temporary name and renamed into place, so processes starting
together never read half a file. A cache that cannot be written (read-only folder, full
disk) or read is skipped with a log message: the session is then built the normal way.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PREFIX = "onnx-optimised-"
SUFFIX = ".onnx"
#: The weights file beside a graph: ``<graph's stem>-<writer>.weights``.
WEIGHTS_SUFFIX = ".weights"
#: Tensors of at least this many bytes go to the weights file (the rest stay in the graph).
WEIGHTS_MIN_BYTES = 1024
#: Part of every key: changes whenever the files' layout does (a graph of one file, from
#: before the weights file, is then replaced instead of read).
LAYOUT = "weights-file-1"
#: A temporary file older than this is left over from a crashed writer: removed.
STALE_TEMP_SECONDS = 3600.0
#: The cache's folder (default ``$LINKMEM_HOME/cache``), or "0" to build every session from
#: the model file (no cache read or written).
CACHE_ENV = "LINKMEM_ONNX_CACHE"
_OFF = ("0", "false", "no", "off")

Build = Callable[[str | bytes, Any], Any]


def cache_enabled(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(CACHE_ENV, "").strip().lower() not in _OFF


def default_cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """``$LINKMEM_ONNX_CACHE`` if it names a folder, else ``<linkmem home>/cache``
    (``$LINKMEM_HOME``, else the per-user data folder)."""
    from linkmem.config import default_home

    folder = env.get(CACHE_ENV, "").strip()
    if folder and folder.lower() not in _OFF:
        return Path(folder)
    return Path(default_home(env)) / "cache"


def cache_key(model: Path, runtime_version: str, variant: str = "") -> str:
    """Changes whenever the model file, onnxruntime, the machine type or the ``variant`` (a
    rewrite of the graph, see ``linkmem.embed.onnx_graph``) does."""
    stat = model.stat()
    raw = f"{model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{runtime_version}|"
    raw += f"{platform.machine()}|{LAYOUT}" + (f"|{variant}" if variant else "")
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def cached_session(
    model: Path,
    cache_dir: Path,
    options: Any,
    build: Build,
    *,
    variant: str = "",
    source: Callable[[], str | bytes] | None = None,
) -> Any:
    """A session of ``model`` built by ``build(path, options)``, through the cache.

    ``options`` are the session's usual options; this sets their optimisation level and,
    on a miss, where the optimised graph is saved. ``source``, if given, makes what a miss
    builds from (the rewritten graph's bytes) instead of ``model``'s path; ``variant`` names
    that rewrite in the cache key.
    """
    import onnxruntime as ort

    target = cache_dir / f"{PREFIX}{cache_key(model, ort.__version__, variant)}{SUFFIX}"
    if target.is_file():
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return build(str(target), options)
        except Exception as exc:  # a damaged file: rebuild it below
            log.warning("linkmem: cached ONNX model %s unusable (%s); rebuilding it", target, exc)
    return _build_and_save(source() if source is not None else str(model), target, options, build)


def _build_and_save(model: str | bytes, target: Path, options: Any, build: Build) -> Any:
    import onnxruntime as ort

    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    temp = _temp_file(target.parent)
    if temp is None:
        return build(model, options)
    weights = weights_file(target, temp)
    options.optimized_model_filepath = str(temp)
    # Read only when the graph is saved, so the build below without saving ignores them.
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_file_name", weights.name
    )
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", str(WEIGHTS_MIN_BYTES)
    )
    try:
        session = build(model, options)
    except Exception as exc:  # e.g. the disk is full: build without saving
        _unlink(temp, weights)
        log.info("linkmem: could not save the optimised ONNX model (%s); not caching", exc)
        options.optimized_model_filepath = ""
        return build(model, options)
    try:
        for path in (weights, temp):  # as plain files would be (mkstemp makes them private)
            if path.exists():  # no weights file: every tensor was small enough for the graph
                os.chmod(path, 0o644)
        os.replace(temp, target)  # the graph last: it names a weights file already in place
    except OSError as exc:
        _unlink(temp, weights)
        log.info("linkmem: could not save the optimised ONNX model (%s); not caching", exc)
        return session
    _remove_others(target, weights)
    return session


def weights_file(target: Path, temp: Path) -> Path:
    """The weights file of the graph the writer of ``temp`` saves as ``target``."""
    writer = temp.name.removeprefix(f".{PREFIX}").removesuffix(".tmp")
    return target.with_name(f"{target.stem}-{writer}{WEIGHTS_SUFFIX}")


def _unlink(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _temp_file(folder: Path) -> Path | None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{PREFIX}", suffix=".tmp", dir=folder)
        os.close(handle)
    except OSError as exc:
        log.info("linkmem: ONNX model cache %s not writable (%s); not caching", folder, exc)
        return None
    return Path(name)


def _remove_others(keep: Path, weights: Path) -> None:
    """Remove the cache's other optimised models (older model files or runtimes) with their
    weights, and temporary files left by crashed writers. Another writer's weights for the
    same entry are left until they are stale: its graph may be renamed into place after
    this one."""
    now = time.time()
    for path in keep.parent.iterdir():
        name = path.name
        stale = _age(path, now) > STALE_TEMP_SECONDS
        stale_temp = name.startswith(f".{PREFIX}") and stale
        other_weights = name.endswith(WEIGHTS_SUFFIX) and (
            not name.startswith(f"{keep.stem}-") or stale
        )
        model = name.startswith(PREFIX) and (name.endswith(SUFFIX) or other_weights)
        if path not in (keep, weights) and (stale_temp or model):
            try:
                path.unlink()
            except OSError:
                pass  # another process removed it, or it is not ours to remove


def _age(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except OSError:
        return 0.0
