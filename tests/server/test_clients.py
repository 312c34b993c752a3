"""RemoteMemory's whole-file calls, the asyncio clients, and the retry rule, against real
``linkmem serve`` processes (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from linkmem import (
    AsyncMemory,
    AsyncRemoteMemory,
    BackendUnavailable,
    InvalidInput,
    NotFound,
    RemoteMemory,
)
from linkmem.client import calls
from linkmem.client.transport import should_retry
from linkmem.embed.fake import FakeEmbedder

SERVERS = ["remote_sqlite", pytest.param("remote_postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=SERVERS)
def remote(request: pytest.FixtureRequest) -> RemoteMemory:
    client = RemoteMemory(request.getfixturevalue(request.param).url)
    client.reset()
    yield client
    client.close()


def test_export_reset_restore_round_trip(remote: RemoteMemory, tmp_path: Path):
    remote.add("Max walks in Lisbon", user_id="u", metadata={"n": 1})
    remote.add("Ana paints", user_id="v")
    before = {m["id"]: m for m in remote.get_all(user_id="u")["results"]}
    report = remote.export(tmp_path / "all.jsonl")
    assert report["memories"] == 2 and report["entities"] >= 2 and report["history"] == 2
    header = json.loads((tmp_path / "all.jsonl").read_text().splitlines()[0])
    assert header["type"] == "header" and header["counts"]["memory"] == 2
    remote.reset()
    assert remote.count() == 0
    restored = remote.restore(tmp_path / "all.jsonl")
    assert restored["memories"] == 2
    assert {m["id"]: m for m in remote.get_all(user_id="u")["results"]} == before
    assert remote.entity_memories("Max", user_id="u")["results"][0]["memory"] == (
        "Max walks in Lisbon"
    )


def test_a_damaged_restore_writes_nothing(remote: RemoteMemory, tmp_path: Path):
    remote.add("Max walks", user_id="u")
    remote.export(tmp_path / "all.jsonl")
    remote.reset()
    lines = (tmp_path / "all.jsonl").read_text().splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join([*lines, "{not json"]) + "\n")
    with pytest.raises(InvalidInput, match="nothing was written"):
        remote.restore(tmp_path / "bad.jsonl")
    assert remote.count() == 0


def test_import_runs_on_the_server(remote: RemoteMemory, tmp_path: Path):
    path = tmp_path / "notes.jsonl"
    rows = [{"text": "Max likes tea"}, {"text": "Ana likes Lisbon", "user_id": "ana"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = remote.import_file(path, user_id="max")
    assert report["memories"] == 2
    assert remote.count(user_id="max") == 1 and remote.count(user_id="ana") == 1
    again = remote.import_file(path, user_id="max", skip_existing=True)
    assert again["memories"] == 0 and remote.count() == 2
    path.write_text('{"text": "ok"}\n{"txt": "typo"}\n')
    with pytest.raises(InvalidInput, match="line 2"):
        remote.import_file(path, user_id="max")
    assert remote.count() == 2


def test_async_remote_memory_runs_calls_concurrently(remote: RemoteMemory):
    async def main() -> tuple[list[dict], dict]:
        async with AsyncRemoteMemory(remote.settings.url) as memory:
            added = await asyncio.gather(
                *(memory.add(f"Max visit {i}", user_id="u") for i in range(8))
            )
            found = await memory.search("Max visit", user_id="u", top_k=20)
            with pytest.raises(NotFound):
                await memory.get("00000000-0000-0000-0000-000000000000")
            return added, found

    added, found = asyncio.run(main())
    assert len(added) == 8 and len(found["results"]) == 8
    assert remote.count(user_id="u") == 8


class SlowEmbedder(FakeEmbedder):
    def embed_batch(self, texts):
        time.sleep(0.3)
        return super().embed_batch(texts)


def test_async_memory_keeps_the_event_loop_free(tmp_path: Path):
    async def main() -> tuple[int, dict]:
        memory = AsyncMemory(tmp_path / "m.db", embedder=SlowEmbedder())
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        added = await memory.add("Max walks", user_id="u")
        task.cancel()
        await memory.close()
        return ticks, added

    ticks, added = asyncio.run(main())
    assert added["results"][0]["memory"] == "Max walks"
    assert ticks >= 10  # the 0.3 s embedding ran in a thread, not on the loop


def test_an_unreachable_server_is_backend_unavailable():
    with socket_port() as port:
        memory = RemoteMemory(f"http://127.0.0.1:{port}", retries=1, timeout=2)
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match="linkmem serve"):
            memory.search("x", user_id="u")
        assert time.monotonic() - started < 5
        memory.close()


def test_only_idempotent_calls_are_retried_after_a_lost_answer():
    lost = httpx.ReadTimeout("lost")
    never_sent = httpx.ConnectError("refused")
    assert should_retry(calls.search("x", user_id="u"), lost, None)
    assert should_retry(calls.get_all(user_id="u"), lost, None)
    assert not should_retry(calls.add("x", user_id="u"), lost, None)
    assert not should_retry(calls.delete("id-1"), lost, None)
    assert should_retry(calls.add("x", user_id="u"), never_sent, None)


def test_client_settings_are_checked():
    with pytest.raises(InvalidInput, match="url"):
        RemoteMemory("127.0.0.1:8765")
    with pytest.raises(InvalidInput, match="LINKMEM_URL"):
        RemoteMemory()


class socket_port:
    """A port that nothing listens on (bound, never listening)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_an_open_server_answers_only_requests_addressed_to_loopback(remote_sqlite):
    """DNS rebinding: a page whose domain now resolves to 127.0.0.1 sends its own Host."""
    url = f"{remote_sqlite.url}/v1/memories/count"
    rebound = httpx.get(url, headers={"Host": "attacker.example"})
    assert rebound.status_code == 403 and rebound.json()["error"]["code"] == "forbidden"
    port = remote_sqlite.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        assert httpx.get(url, headers={"Host": host}).status_code == 200


def test_the_server_tunes_glibc_malloc_where_it_runs_on_glibc():
    import platform

    from linkmem.server.allocator import tune_allocator

    assert tune_allocator() == (platform.libc_ver()[0] == "glibc")
