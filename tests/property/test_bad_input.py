"""Bad input never escapes as a non-linkmem exception, never writes, and is refused alike by
SQLite and PostgreSQL: a property test over the public API of ``Memory``, and one regression
test per defect found (issue 9, items 6 and 7)."""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import CapitalisedWordsExtractor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkmem import InvalidInput, Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.errors import LinkmemError
from linkmem.filters import MAX_FILTER_TERMS, OPERATORS
from linkmem.store.transfer import encode_vector, header_row, link_row, memory_row
from linkmem.types import MemoryRecord, Scope
from linkmem.validation import MAX_NESTING

USER = {"user_id": "alice"}
SEED = ["Max likes Lisbon", "Emma met Max in Porto"]
ROLES = ("user", "assistant", "system", "tool", "function", "developer")
TABLE_SUFFIXES = ("", "_scopes", "_postings", "_entities", "_links", "_history")
NAN, INF = float("nan"), float("inf")


# the store before and after -----------------------------------------------------------------------
def fingerprint(memory: Memory) -> str:
    """A hash of every row of every table of the collection (and the store's meta)."""
    store: Any = memory.store
    collection = store.t.c if hasattr(store, "t") else store.c
    tables = [f'"{collection}{suffix}"' for suffix in TABLE_SUFFIXES] + ["linkmem_meta"]
    rows = [sorted(map(repr, store.db.rows(f"SELECT * FROM {table}"))) for table in tables]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def seed(memory: Memory) -> list[str]:
    """A few memories with entities and metadata; returns their ids."""
    items = [*SEED, {"role": "assistant", "content": "Oscar drinks coffee", "name": "coach"}]
    metadata = [{"topic": "pets", "n": 1}, {"tags": ["a", "b"]}, None]
    return [r["id"] for r in memory.add_batch(items, **USER, metadata=metadata)["results"]]


def open_sqlite(path: Path, **settings: Any) -> Memory:
    extractor = CapitalisedWordsExtractor()
    return Memory(path, embedder=FakeEmbedder(), extractor=extractor, **settings)


# export files -------------------------------------------------------------------------------------
def unit_vector(dim: int) -> np.ndarray:
    vector = np.ones(dim, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def a_memory_row(dim: int, **changes: Any) -> dict[str, Any]:
    at = "2024-05-01T10:00:00+00:00"
    record = MemoryRecord(str(uuid.uuid4()), "A fine memory", Scope("alice"), {}, at, at, "user")
    return {**memory_row(record, unit_vector(dim)), **changes}


def export_text(dim: int, rows: list[dict[str, Any]]) -> str:
    """An export of ``rows`` whose header counts them (JSON escapes NUL and surrogates)."""
    counts = {kind: sum(r["type"] == kind for r in rows) for kind in ("memory", "link")}
    header = header_row("sqlite", "memories", None, dim, counts)
    return "".join(json.dumps(row) + "\n" for row in [header, *rows])


def nested(depth: int, leaf: Any = 1) -> Any:
    """A dict nested ``depth`` deep, the outermost counted."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def nested_filter(depth: int) -> dict[str, Any]:
    """NOT wrapped around NOT ... around one condition: ``depth`` dicts deep."""
    value: dict[str, Any] = {"topic": "pets"}
    for _ in range(depth - 1):
        value = {"NOT": value}
    return value


def bad_export_rows(kind: str, dim: int, existing_id: str) -> list[dict[str, Any]]:
    """Rows of an export that some backend could not (or should not) write."""
    row = a_memory_row(dim)
    changes = {
        "nul_text": {"text": "a\x00b"},
        "surrogate_text": {"text": "a\ud800b"},
        "surrogate_metadata": {"metadata": {"k": "\udfff"}},
        "nul_metadata_key": {"metadata": {"k\x00": 1}},
        "deep_metadata": {"metadata": nested(MAX_NESTING + 1)},
        "nan_metadata": {"metadata": {"n": NAN}},
        "huge_int_metadata": {"metadata": {"n": 10**30}},
        "scope_key_in_metadata": {"metadata": {"user_id": "bob"}},
        "bad_scope_id": {"user_id": "a b"},
        "no_scope": {"user_id": None},
        "nan_vector": {"vector": encode_vector(np.full(dim, np.nan, dtype=np.float32))},
        "existing_id": {"id": existing_id},
    }
    if kind in changes:
        return [{**row, **changes[kind]}]
    if kind == "dangling_link":
        return [row, link_row(row["id"], "no-such-entity")]
    if kind == "repeated_id":  # in two batches (restore is called with batch_size=1 below)
        return [row, {**a_memory_row(dim), "id": row["id"]}]
    raise AssertionError(kind)


BAD_EXPORTS = (
    "nul_text surrogate_text surrogate_metadata nul_metadata_key deep_metadata nan_metadata "
    "huge_int_metadata scope_key_in_metadata bad_scope_id no_scope nan_vector existing_id "
    "dangling_link repeated_id"
).split()


# calls with placeholders --------------------------------------------------------------------------
@dataclass(frozen=True)
class Existing:
    """A placeholder for the id of a seeded memory (ids differ between stores)."""


@dataclass(frozen=True)
class BadExport:
    """A placeholder for a file object holding a bad export (built for the store's dim)."""

    kind: str


@dataclass(frozen=True)
class EmptyExport:
    """A placeholder for a file object holding a valid export with no rows."""


@dataclass(frozen=True)
class Text:
    """A placeholder for a new file object holding ``text`` (each store reads its own)."""

    text: str


@dataclass(frozen=True)
class FileObject:
    """A placeholder for a file object that cannot be used: "closed" or "binary"."""

    kind: str

    def open(self) -> io.IOBase:
        if self.kind == "binary":
            return io.BytesIO()
        closed = io.StringIO()
        closed.close()
        return closed


@dataclass
class Call:
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def run(self, memory: Memory, ids: list[str]) -> Any:
        def resolve(value: Any) -> Any:
            if isinstance(value, Existing):
                return ids[0]
            if isinstance(value, BadExport):
                rows = bad_export_rows(value.kind, memory.embedder.dim, ids[0])
                return io.StringIO(export_text(memory.embedder.dim, rows))
            if isinstance(value, EmptyExport):
                return io.StringIO(export_text(memory.embedder.dim, []))
            if isinstance(value, Text):
                return io.StringIO(value.text)
            if isinstance(value, FileObject):
                return value.open()
            return value

        args = [resolve(a) for a in self.args]
        kwargs = {k: resolve(v) for k, v in self.kwargs.items()}
        return getattr(memory, self.method)(*args, **kwargs)


def outcome(call: Call, memory: Memory, ids: list[str]) -> type[BaseException] | None:
    try:
        call.run(memory, ids)
    except Exception as e:  # noqa: BLE001 - the property is about which ones come out
        return type(e)
    return None


# bad values ---------------------------------------------------------------------------------------
unstorable_char = st.just("\x00") | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
unstorable_text = st.builds(
    lambda a, bad, b: a + bad + b, st.text(max_size=4), unstorable_char, st.text(max_size=4)
)
huge_int = st.integers(min_value=2**63) | st.integers(max_value=-(2**63) - 1) | st.just(10**5000)
not_finite = st.sampled_from([NAN, INF, -INF])
odd_object = st.sampled_from([{1, 2}, b"bytes", complex(1, 2), object(), range(3)])
not_a_string = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.binary(max_size=4),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
bad_text = st.one_of(
    not_a_string,
    st.sampled_from(["", "   ", "\n\t", "x" * 200_001]),
    unstorable_text,
)
bad_name = st.one_of(
    unstorable_text, st.just("n" * 201), st.integers(), st.lists(st.text(), min_size=1)
)
bad_scope_id = st.one_of(
    st.sampled_from(["", " ", "*", "a b", "x" * 129, "-x", "ä", "a\x00"]),
    unstorable_text,
    huge_int,
    st.floats(),
    st.booleans(),
    st.lists(st.text(max_size=2), max_size=2),
)
bad_memory_id = st.one_of(
    not_a_string, st.sampled_from(["", "  "]), unstorable_text, st.uuids().map(str)
)
bad_count = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=10_001),
    st.floats(),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)
bad_batch_size = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=100_001),
    st.floats(),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)
bad_offset = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=1_000_000_001),
    st.floats(),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
)
bad_threshold = st.one_of(
    not_finite,
    st.floats(min_value=1.0, exclude_min=True),
    # Not subnormals: a library that sets flush-to-zero in this process (seen in a full run)
    # turns -5e-324 into 0.0, which is a valid threshold.
    st.floats(max_value=-1e-300),
    st.text(max_size=3),
    st.booleans(),
)
bad_json_value = st.one_of(
    huge_int,
    not_finite,
    unstorable_text,
    odd_object,
    st.integers(MAX_NESTING, MAX_NESTING + 300).map(nested),
)
bad_metadata = st.one_of(
    st.one_of(st.text(max_size=3), st.integers(), st.lists(st.integers(), max_size=2)),
    st.sampled_from([{"": 1}, {"user_id": "bob"}, {"run_id": None}, {1: 2}, {("a",): 1}]),
    st.builds(lambda key: {key: 1}, unstorable_text),
    st.builds(lambda value: {"k": value}, bad_json_value),
    st.builds(lambda value: {"k": [1, {"deeper": value}]}, bad_json_value),
    st.builds(lambda key: {"k": {key: 1}}, unstorable_text | st.integers()),
    st.just({"k": "x" * 70_000}),  # over the default max_metadata_bytes (64 KiB)
)
bad_scalar = st.one_of(huge_int, not_finite, unstorable_text, odd_object, st.just([[1]]))
bad_filter_key = st.one_of(
    st.sampled_from(["", "a b", "-x", ".x", "k\n", "x" * 65, "$.x", 'a"b']), unstorable_text
)
bad_filters = st.one_of(
    st.one_of(st.text(max_size=3), st.integers(), st.lists(st.integers(), min_size=1)),
    st.builds(lambda key: {key: 1}, bad_filter_key),
    st.builds(
        lambda op: {"topic": {op: 1}}, st.text(max_size=6).filter(lambda op: op not in OPERATORS)
    ),
    st.just({"topic": {}}),
    st.builds(lambda value: {"topic": value}, bad_scalar),
    st.builds(lambda value: {"topic": [1, value]}, bad_scalar),
    st.builds(
        lambda op, value: {"n": {op: value}},
        st.sampled_from(OPERATORS),
        bad_scalar | st.just({"nested": 1}),
    ),
    st.builds(
        lambda op, value: {"n": {op: value}},
        st.sampled_from(["gt", "gte", "lt", "lte"]),
        st.sampled_from([True, None, "abc", "2024-1-1", "2024-01-01\n"]),
    ),
    st.builds(
        lambda op, value: {"n": {op: value}},
        st.sampled_from(["in", "nin"]),
        st.sampled_from([[], "ab", 3, None, {}]),
    ),
    st.builds(
        lambda op, value: {op: value},
        st.sampled_from(["AND", "OR", "NOT"]),
        st.sampled_from([[], None, "ab", 3, [1], [{}]]),
    ),
    st.integers(MAX_NESTING + 1, MAX_NESTING + 3000).map(nested_filter),
    st.integers(MAX_FILTER_TERMS + 1, MAX_FILTER_TERMS + 50).map(lambda n: {"n": list(range(n))}),
    st.just({"user_id": "bob"}),  # the scope is given twice, differently
)
bad_message = st.one_of(
    bad_text,
    st.builds(
        lambda role: {"role": role, "content": "fine"},
        st.one_of(st.text(max_size=6).filter(lambda r: r not in ROLES), not_a_string),
    ),
    st.builds(lambda text: {"content": text}, bad_text),
    st.builds(lambda name: {"content": "fine", "name": name}, bad_name),
    st.just({"role": "system", "content": "context only"}),
)
bad_items = st.one_of(
    st.text(max_size=8),
    st.binary(max_size=8),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    st.just([]),
    st.integers(),
    st.none(),
    st.lists(bad_message, min_size=1, max_size=3),
    st.builds(lambda bad: ["fine", bad], bad_message),
)
bad_entity = st.one_of(
    not_a_string,
    st.sampled_from(["", "  "]),
    unstorable_text,
    st.text("abcdefgh", min_size=1, max_size=8).map(lambda t: "Zz" + t),
)
bad_new_name = st.one_of(not_a_string, st.sampled_from(["", "  ", "n" * 201]), unstorable_text)
bad_destination = st.sampled_from(
    [5, None, b"x.jsonl", "", "/no-such-dir/x.jsonl", "a\x00.jsonl", tempfile.gettempdir()]
) | st.sampled_from(["closed", "binary"]).map(FileObject)
bad_source = st.one_of(
    st.sampled_from([5, None, b"{}", "", "/no-such-dir/x.jsonl", "a\x00.jsonl"]),
    st.just(FileObject("closed")),
    st.sampled_from(BAD_EXPORTS).map(BadExport),
    st.sampled_from(["", "not json\n", '{"type": "header"}\n', "[" * 5000 + "\n"]).map(Text),
)


def call(method: str, *args: Any, **kwargs: Any) -> Call:
    return Call(method, args, kwargs)


def build(method: str, *args: Any, **kwargs: Any) -> st.SearchStrategy[Call]:
    """A strategy of ``Call`` whose arguments may themselves be strategies."""
    as_strategy = [a if isinstance(a, st.SearchStrategy) else st.just(a) for a in args]
    named = {k: v if isinstance(v, st.SearchStrategy) else st.just(v) for k, v in kwargs.items()}
    arguments = st.tuples(st.tuples(*as_strategy), st.fixed_dictionaries(named))
    return arguments.map(lambda given: Call(method, *given))


bad_calls = st.one_of(
    # writes
    build("add", bad_text, **USER),
    build("add", "A fine memory", user_id=bad_scope_id),
    build("add", "A fine memory", **USER, metadata=bad_metadata),
    build("add", bad_message, **USER),
    build("add_batch", bad_items, **USER),
    build(
        "add_batch",
        ["fine", "also fine"],
        **USER,
        metadata=st.one_of(
            st.builds(lambda m: [None, m], bad_metadata),
            st.sampled_from(["ab", {"topic": "x"}, [None], [None, None, None], 5]),
        ),
    ),
    st.just(call("add_batch", ["fine"], **USER, infer=True)),
    st.just(call("add", "A fine memory")),
    build("update", bad_memory_id, "new text"),
    build("update", Existing(), bad_text),
    build("update", Existing(), metadata=bad_metadata),
    build("delete", bad_memory_id),
    build("delete_all", user_id=bad_scope_id),
    st.just(call("delete_all")),
    # reads
    build("get", bad_memory_id),
    build("get", Existing(), user_id=bad_scope_id),
    build("history", bad_memory_id),
    build("search", bad_text, **USER),
    build("search", "Max", user_id=bad_scope_id),
    build("search", "Max", **USER, filters=bad_filters),
    build("search", "Max", **USER, top_k=bad_count),
    build("search", "Max", **USER, threshold=bad_threshold),
    build("search", "Max", **USER, signals=st.sampled_from([5, "all", True])),
    build("get_all", **USER, filters=bad_filters),
    build("get_all", **USER, limit=bad_count),
    build("get_all", **USER, offset=bad_offset),
    build("get_all", user_id=bad_scope_id),
    # entities
    build("entities", **USER, limit=bad_count),
    build("entities", **USER, offset=bad_offset),
    build("entities", **USER, order=st.one_of(st.text(max_size=6), not_a_string)),
    build("entity_memories", bad_entity, **USER),
    build("memory_entities", bad_memory_id),
    build("related_entities", bad_entity, **USER),
    build("related_entities", "Max", **USER, limit=bad_count),
    build("merge_entities", bad_entity, "Max", **USER),
    build("merge_entities", "Max", bad_entity, **USER),
    st.just(call("merge_entities", "Max", "max", **USER)),
    build("rename_entity", "Max", bad_new_name, **USER),
    build("rename_entity", bad_entity, "Maxwell", **USER),
    # export and restore
    build("export", bad_destination),
    build("export", Text(""), batch_size=bad_batch_size),
    build("restore", bad_source),
    build("restore", EmptyExport(), batch_size=bad_batch_size),
    build("restore", EmptyExport(), progress=st.sampled_from([5, "x", []])),
)


def bad_order_is_bad(call: Call) -> bool:
    """``entities(order=...)`` with a generated text might name a valid order."""
    return call.kwargs.get("order") not in ("links", "text", "recent")


@pytest.fixture
def seeded(make_memory, backend: str, tmp_path: Path):
    """The store under test and, for PostgreSQL, a SQLite store seeded alike to compare."""
    memory = make_memory()
    stores = [(memory, seed(memory))]
    if backend != "sqlite":
        reference = open_sqlite(tmp_path / "reference.db")
        stores.append((reference, seed(reference)))
    yield stores
    for extra, _ in stores[1:]:
        extra.close()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(bad=bad_calls.filter(bad_order_is_bad))
def test_bad_input_raises_a_linkmem_error_writes_nothing_and_backends_agree(seeded, bad: Call):
    outcomes = []
    for memory, ids in seeded:
        before = fingerprint(memory)
        raised = outcome(bad, memory, ids)
        assert raised is not None, f"{bad} was accepted"
        assert issubclass(raised, LinkmemError), f"{bad} raised {raised.__name__}"
        assert fingerprint(memory) == before, f"{bad} changed the store"
        outcomes.append(raised)
    assert len(set(outcomes)) == 1, f"{bad}: backends disagree: {outcomes}"


# regression tests, one per defect -----------------------------------------------------------------
def refused(
    memory: Memory, method: str, *args: Any, match: str | None = None, **kwargs: Any
) -> None:
    """``method`` raises InvalidInput (matching ``match``) and leaves the store as it was."""
    before = fingerprint(memory)
    with pytest.raises(InvalidInput, match=match):
        getattr(memory, method)(*args, **kwargs)
    assert fingerprint(memory) == before


def test_a_lone_surrogate_in_metadata_is_refused_so_export_keeps_working(memory, tmp_path):
    memory.add("fine", **USER)
    refused(memory, "add", "x", **USER, metadata={"k": "\ud800"}, match="lone surrogate")
    refused(memory, "add", "x", **USER, metadata={"k\udc80": 1}, match="lone surrogate")
    refused(memory, "add", "x", **USER, metadata={"k": ["a", {"b": "\udfff"}]}, match="surrog")
    assert memory.export(tmp_path / "all.jsonl")["memories"] == 1


def test_nul_is_refused_on_every_backend(memory):
    for text in ("a\x00b", "\x00"):
        refused(memory, "add", text, **USER, match="NUL")
    refused(memory, "add", "x", **USER, metadata={"k": "a\x00"}, match="NUL")
    refused(memory, "add", "x", **USER, metadata={"k\x00": 1}, match="NUL")
    refused(memory, "search", "Max", **USER, filters={"k": "\x00"}, match="NUL")
    refused(memory, "get", "a\x00b", match="NUL")


def test_an_export_with_a_bad_row_after_row_1000_writes_nothing(make_memory, tmp_path):
    """A SQLite export with NUL (which SQLite used to store) restored into PostgreSQL stopped
    at row 1,001 with the first 1,000 rows written."""
    target = make_memory()
    dim = target.embedder.dim
    for bad in ({"text": "a\x00b"}, {"metadata": {"k": "\ud800"}}):
        rows = [a_memory_row(dim) for _ in range(1_100)]
        rows[1_050].update(bad)
        (tmp_path / "bad.jsonl").write_text(export_text(dim, rows), encoding="utf-8")
        before = fingerprint(target)
        with pytest.raises(InvalidInput, match="row 1052: memory"):
            with (tmp_path / "bad.jsonl").open(encoding="utf-8") as f:
                target.store.import_records(map(json.loads, f), dry_run=True)
        with pytest.raises(InvalidInput, match="row 1052: memory"):
            target.restore(tmp_path / "bad.jsonl")
        assert fingerprint(target) == before


@pytest.mark.parametrize("kind", ["repeated_id", "dangling_link", "nan_vector", "bad_scope_id"])
def test_the_dry_run_finds_what_the_write_would_fail_on(make_memory, kind):
    """Ids repeated in two batches and links to unknown ids failed only when written."""
    target = make_memory()
    rows = [a_memory_row(target.embedder.dim) for _ in range(3)]
    rows += bad_export_rows(kind, target.embedder.dim, "unused")
    text = export_text(target.embedder.dim, rows)
    refused(target, "restore", io.StringIO(text), batch_size=1)


ODD_TEXTS = [
    "emoji 🐕‍🦺 and flags 🇵🇹, astral 𝔘𝔫𝔦 \U0010ffff",
    "controls \x01\x02\x1f\x7f\x85 and line breaks \r\n\u2028\u2029 and tabs\t",
    "non-characters \ufffe\uffff\ufdd0, BOM \ufeff, replacement \ufffd",
    "combining é vs é, zero-width \u200b\u200c\u200d, RTL \u202eabc\u202c עברית العربية",
    'quotes "\'` backslash \\ and JSON-ish {"a": [1]} and SQL \'; DROP TABLE x; --',
    "CJK 漢字かなカナ 한국어, Devanagari हिन्दी, Thai ภาษาไทย",
]


def test_odd_but_valid_unicode_round_trips_from_sqlite(make_memory, tmp_path):
    source = open_sqlite(tmp_path / "source.db")
    metadata = [{"text": t, t[:8]: [t, {"k": t}], "n": -(2**63), "m": 2**63 - 1} for t in ODD_TEXTS]
    source.add_batch(ODD_TEXTS, **USER, metadata=metadata)
    source.export(tmp_path / "odd.jsonl")
    target = make_memory()
    target.restore(tmp_path / "odd.jsonl")
    assert target.get_all(**USER)["results"] == source.get_all(**USER)["results"]
    target.export(tmp_path / "again.jsonl")
    exports = [(tmp_path / f"{n}.jsonl").read_text(encoding="utf-8") for n in ("odd", "again")]
    rows = [[json.loads(line) for line in text.splitlines()] for text in exports]
    assert rows[0][1:] == rows[1][1:]
    source.close()


def test_add_batch_refuses_an_empty_list_and_a_string_or_dict_of_items(memory):
    refused(memory, "add_batch", [], **USER, match="empty")
    for items in ("hello", b"hello", {"role": "user", "content": "hi"}, (x for x in "ab")):
        refused(memory, "add_batch", items, **USER, match="items must be a list")


def test_surrogates_in_text_ids_and_filters_are_refused(memory):
    refused(memory, "add", "x\ud800", **USER, match="surrogate")
    refused(memory, "add", {"content": "x", "name": "\udc00"}, **USER, match="surrogate")
    refused(memory, "search", "x\udbff", **USER, match="surrogate")
    refused(memory, "search", "x", **USER, filters={"k": "\ud800"}, match="surrogate")
    refused(memory, "search", "x", **USER, filters={"\ud800": 1}, match="metadata key")
    refused(memory, "get", "\ud800", match="surrogate")
    refused(memory, "entity_memories", "\ud800", **USER, match="surrogate")


def test_nesting_is_limited_in_metadata_and_filters_and_the_limit_itself_works(memory):
    refused(memory, "add", "x", **USER, metadata=nested(5_000), match="nested more than 32")
    refused(memory, "add", "x", **USER, metadata=nested(MAX_NESTING + 1), match="nested")
    refused(memory, "search", "x", **USER, filters=nested_filter(5_000), match="nested")
    refused(memory, "get_all", **USER, filters=nested_filter(300), match="nested")  # parser
    memory.add("Deep", **USER, metadata=nested(MAX_NESTING))
    assert memory.get_all(**USER, filters=nested_filter(MAX_NESTING))["results"]
    leaf = {"icontains": "a", "nin": [1, 2]}
    deepest = {"topic": leaf}
    for _ in range(MAX_NESTING - 3):
        deepest = {"NOT": deepest}
    memory.search("Deep", **USER, filters=deepest)


def test_integers_outside_64_bits_are_refused_and_its_bounds_are_stored(memory):
    for n in (10**30, 2**63, -(2**63) - 1, 10**5000):
        refused(memory, "add", "x", **USER, metadata={"n": n}, match="64-bit")
        refused(memory, "search", "x", **USER, filters={"n": {"gt": n}}, match="64-bit")
    refused(memory, "add", "x", user_id=10**5000, match="64-bit")
    memory.add("bounds", **USER, metadata={"lo": -(2**63), "hi": 2**63 - 1})
    found = memory.get_all(**USER, filters={"hi": 2**63 - 1, "lo": {"lte": -(2**63)}})
    assert [r["metadata"] for r in found["results"]] == [{"lo": -(2**63), "hi": 2**63 - 1}]


def test_nan_and_infinity_in_filters_are_refused(memory):
    for value in (NAN, INF, -INF):
        refused(memory, "search", "x", **USER, filters={"n": value}, match="finite")
        refused(memory, "get_all", **USER, filters={"n": {"gte": value}}, match="finite")
        refused(memory, "get_all", **USER, filters={"n": {"in": [1, value]}}, match="finite")


@pytest.mark.parametrize("offset", ["abc", None, 10**20, -1, 1.0, True])
def test_offsets_are_integers_within_bounds_on_every_backend(memory, offset):
    refused(memory, "get_all", **USER, offset=offset, match="offset must be an integer")
    refused(memory, "entities", **USER, offset=offset, match="offset must be an integer")


def test_metadata_size_is_limited_by_a_setting(make_memory):
    memory = make_memory(max_metadata_bytes=100)
    refused(memory, "add", "x", **USER, metadata={"k": "é" * 50}, match="max_metadata_bytes")
    memory.add("x", **USER, metadata={"k": "é" * 40})  # 88 bytes as JSON
    default = make_memory()
    assert default.settings.max_metadata_bytes == 64 * 1024
    refused(default, "add", "x", **USER, metadata={"k": "x" * 20_000_000}, match="bytes")


def test_filters_compare_at_most_the_term_limit_and_the_limit_itself_works(memory):
    memory.add("Max", **USER, metadata={"n": MAX_FILTER_TERMS - 1})
    values = list(range(MAX_FILTER_TERMS))
    assert memory.get_all(**USER, filters={"n": values})["results"]
    assert memory.get_all(**USER, filters={"AND": [{"n": {"ne": -v}} for v in values[1:]]})
    refused(memory, "get_all", **USER, filters={"n": [*values, -1]}, match="compare")


def test_an_export_of_a_store_holding_a_lone_surrogate_says_what_to_fix(tmp_path):
    """Stores written before the fix may hold one; the export names it and leaves no file."""
    memory = open_sqlite(tmp_path / "old.db")
    memory_id = memory.add("fine", **USER)["results"][0]["id"]
    store: Any = memory.store
    store.db.run(f"UPDATE {store.c} SET metadata = ?", ('{"k": "\\ud800"}',))
    with pytest.raises(InvalidInput, match=f"memory '{memory_id}'.*update or delete it"):
        memory.export(tmp_path / "out.jsonl")
    assert not list(tmp_path.glob("out.jsonl*"))
    memory.close()


def test_export_replaces_only_a_regular_file_and_reports_unwritable_files(memory, tmp_path):
    """Exporting to a folder raised IsADirectoryError; to a device it replaced the device."""
    folder = tmp_path / "folder"
    folder.mkdir()
    refused(memory, "export", folder, match="not a regular file")
    assert folder.is_dir()
    closed = io.StringIO()
    closed.close()
    refused(memory, "export", closed, match="cannot write the export")
    refused(memory, "export", io.BytesIO(), match="cannot write the export")
    refused(memory, "restore", closed, match="cannot read the export")
