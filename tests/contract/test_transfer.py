"""Contract: export a collection and restore it losslessly, on every backend and across them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import CapitalisedWordsExtractor

from linkmem import EmbedderMismatch, InvalidInput, Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.types import Scope

SCOPES = [
    {"user_id": "alice"},
    {"user_id": "alice", "agent_id": "coach"},
    {"agent_id": "coach", "run_id": "r1"},
    {"user_id": "bob"},
]
QUERIES = ["Where does Emma live?", "Max in the park", "coffee in Lisbon", "Oscar"]


def added(result: dict[str, Any]) -> list[str]:
    return [r["id"] for r in result["results"]]


def populate(memory: Memory) -> list[str]:
    """Memories in several scopes, odd metadata, roles and names, an update and a delete;
    returns every memory id ever written (deleted ones keep their history)."""
    out = memory.add_batch(
        [
            "I adopted a dog named Max",
            "Max loves the park near Lisbon",
            {"role": "assistant", "content": "Emma lives in Lisbon", "name": "coach"},
            [{"role": "user", "content": "Oscar drinks coffee"}, {"role": "tool", "content": "ok"}],
        ],
        user_id="alice",
        metadata=[{"topic": "pets", "n": 1.5}, {"tags": ["a", "b"], "ünï": "çödé 🐕"}, None, {}],
    )
    ids = added(out)
    ids += added(memory.add("Max met Emma", user_id="alice", agent_id="coach"))
    ids += added(memory.add("Luna runs in Oslo", agent_id="coach", run_id="r1"))
    ids += added(memory.add_batch([f"Bob note {i} about Max" for i in range(7)], user_id="bob"))
    memory.update(ids[0], "I adopted a dog named Max from Porto", metadata={"n": 2})
    memory.delete(ids[3])
    memory.delete(ids[-1])
    return ids


def snapshot(memory: Memory, ids: list[str]) -> dict[str, Any]:
    """Everything a user can read back: memories, searches with score parts, entities with
    link counts and their memories, and every history."""
    out: dict[str, Any] = {"history": {i: memory.history(i)["results"] for i in ids}}
    for scope in SCOPES:
        entities = memory.entities(**scope, limit=1000)["results"]
        out[json.dumps(scope)] = {
            "memories": memory.get_all(**scope, limit=1000)["results"],
            "search": [memory.search(q, **scope, explain=True)["results"] for q in QUERIES],
            "entities": entities,
            "linked": [memory.entity_memories(e["id"], **scope)["results"] for e in entities],
        }
    return out


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def fresh(make_memory, **overrides: Any) -> Memory:
    """An empty collection on the same backend (same file or database)."""
    return make_memory(collection="r_" + uuid.uuid4().hex[:12], **overrides)


def test_round_trip_keeps_everything(make_memory, tmp_path: Path):
    source = make_memory()
    ids = populate(source)
    report = source.export(tmp_path / "export.jsonl", batch_size=4)  # several pages per kind
    assert report["memories"] == len(ids) - 2 and report["history"] == len(ids) + 3
    assert report["entities"] > 5 and report["links"] > report["entities"]
    target = fresh(make_memory)
    restored = target.restore(tmp_path / "export.jsonl", batch_size=5)  # many transactions
    assert {k: restored[k] for k in ("memories", "entities", "links", "history")} == {
        k: report[k] for k in ("memories", "entities", "links", "history")
    }
    assert snapshot(target, ids) == snapshot(source, ids)
    target.export(tmp_path / "again.jsonl")
    assert rows(tmp_path / "again.jsonl")[1:] == rows(tmp_path / "export.jsonl")[1:]


def test_header_describes_the_export(memory, tmp_path: Path):
    ids = populate(memory)
    memory.export(tmp_path / "e.jsonl")
    header, *body = rows(tmp_path / "e.jsonl")
    assert header["type"] == "header" and header["format"] == "linkmem-export"
    assert header["embedder"] == "fake:32/32" and header["dim"] == 32
    assert header["backend"] == memory.status()["store"]["backend"]
    assert header["counts"]["memory"] == len(ids) - 2
    kinds = [r["type"] for r in body]
    assert kinds == sorted(kinds, key=["memory", "entity", "link", "history"].index)
    deleted = [r for r in body if r["type"] == "history" and r["event"] == "DELETE"]
    assert {r["memory_id"] for r in deleted} == {ids[3], ids[-1]}


def test_gzip_and_file_objects(make_memory, tmp_path: Path):
    source = make_memory()
    ids = populate(source)
    source.export(tmp_path / "e.jsonl.gz")
    target = fresh(make_memory)
    target.restore(tmp_path / "e.jsonl.gz")
    with (tmp_path / "e.jsonl").open("w", encoding="utf-8") as f:
        source.export(f)
    other = fresh(make_memory)
    with (tmp_path / "e.jsonl").open(encoding="utf-8") as f:
        other.restore(f)
    assert snapshot(target, ids) == snapshot(other, ids) == snapshot(source, ids)


@pytest.mark.embedded
def test_store_primitives_stream_into_another_store(make_memory):
    source = make_memory()
    ids = populate(source)
    target = fresh(make_memory)
    counts = target.store.import_records(source.store.export_records(batch_size=3), batch_size=2)
    assert counts["memory"] == len(ids) - 2
    assert snapshot(target, ids) == snapshot(source, ids)


def test_restore_refuses_another_embedder_and_writes_nothing(make_memory, tmp_path: Path):
    source = make_memory()
    populate(source)
    source.export(tmp_path / "e.jsonl")
    target = fresh(make_memory, embedder=FakeEmbedder(dim=16))
    with pytest.raises(EmbedderMismatch, match="fake:32/32"):
        target.restore(tmp_path / "e.jsonl")
    assert target.store.count_memories() == 0


def test_restore_refuses_existing_ids_and_writes_nothing(make_memory, tmp_path: Path):
    source = make_memory()
    ids = populate(source)
    source.export(tmp_path / "e.jsonl")
    before = snapshot(source, ids)
    with pytest.raises(InvalidInput, match="already in the target store"):
        source.restore(tmp_path / "e.jsonl")
    assert snapshot(source, ids) == before
    # Only the last memory is taken: the whole file is checked first, so nothing is written.
    target = fresh(make_memory)
    target.add("squatter", user_id="x")
    squatter = target.get_all(user_id="x")["results"][0]["id"]
    lines = (tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()
    last = max(i for i, line in enumerate(lines) if '"type":"memory"' in line)
    lines[last] = lines[last].replace(json.loads(lines[last])["id"], squatter)
    (tmp_path / "clash.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=squatter):
        target.restore(tmp_path / "clash.jsonl")
    assert target.store.count_memories() == 1


@pytest.mark.embedded
def test_a_failing_batch_writes_nothing_of_itself(make_memory):
    source = make_memory()
    source.add_batch(["one", "two", "three", "four"], user_id="u")
    header, *memories = list(source.store.export_records())[:5]
    target = fresh(make_memory)
    only_third = {**header, "counts": {"memory": 1, "entity": 0, "link": 0, "history": 0}}
    target.store.import_records([only_third, memories[2]])
    with pytest.raises(InvalidInput, match=f"rows 4-5: .*{memories[2]['id']}.*2 rows before"):
        target.store.import_records([header, *memories], batch_size=2)
    kept = {r.id for r in target.store.list_memories(Scope(user_id="u"), None, 10)}
    assert kept == {m["id"] for m in memories[:3]}  # rows 2-3 and the earlier import, not row 5


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines: lines[:-1], "truncated"),
        (lambda lines: [lines[0], "{not json", *lines[1:]], "row 2: not valid JSON"),
        (lambda lines: lines[1:], "not a linkmem export"),
        (lambda lines: [*lines, json.dumps({"type": "memory"})], "missing"),
        (lambda lines: [*lines, json.dumps({"type": "nope"})], "unknown row type"),
    ],
)
def test_damaged_files_are_refused_before_writing(make_memory, tmp_path: Path, damage, message):
    source = make_memory()
    populate(source)
    source.export(tmp_path / "e.jsonl")
    lines = damage((tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines())
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = fresh(make_memory)
    with pytest.raises(InvalidInput, match=message):
        target.restore(tmp_path / "bad.jsonl")
    assert target.store.count_memories() == 0 and target.store.history("x") == []


@pytest.mark.postgres
def test_sqlite_to_postgres_to_sqlite(tmp_path: Path, pg_dsn_18: str):
    def open_memory(**settings: Any) -> Memory:
        return Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)

    first = open_memory(**{"sqlite.path": str(tmp_path / "first.db")})
    ids = populate(first)
    first.export(tmp_path / "from-sqlite.jsonl")
    pg = open_memory(
        store="postgres", postgres={"dsn": pg_dsn_18}, collection="x_" + uuid.uuid4().hex[:8]
    )
    pg.restore(tmp_path / "from-sqlite.jsonl")
    pg.export(tmp_path / "from-postgres.jsonl")
    last = open_memory(**{"sqlite.path": str(tmp_path / "last.db")})
    last.restore(tmp_path / "from-postgres.jsonl")
    last.export(tmp_path / "again.jsonl")

    exports = [
        rows(tmp_path / n) for n in ("from-sqlite.jsonl", "from-postgres.jsonl", "again.jsonl")
    ]
    assert exports[0][1:] == exports[1][1:] == exports[2][1:]  # vectors bit for bit
    assert [e[0]["backend"] for e in exports] == ["sqlite", "postgres", "sqlite"]
    expected = snapshot(first, ids)
    assert snapshot(last, ids) == expected
    assert_same_up_to_float_noise(snapshot(pg, ids), expected)
    for m in (first, pg, last):
        m.close()


def assert_same_up_to_float_noise(got: Any, want: Any) -> None:
    """Equal, except floats (scores) may differ in the last digit between backends."""
    if isinstance(want, float):
        assert got == pytest.approx(want, abs=2e-6)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            assert_same_up_to_float_noise(got[key], want[key])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_up_to_float_noise(g, w)
    else:
        assert got == want
