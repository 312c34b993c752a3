"""The CLI against a server (``--url`` / ``LINKMEM_URL``), and ``linkmem serve`` itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest
from cli_helpers import LINKMEM, data, run
from server_fixtures import free_port, wait_ready

from linkmem import RemoteMemory


@pytest.fixture
def url(remote_sqlite, monkeypatch: pytest.MonkeyPatch) -> str:
    RemoteMemory(remote_sqlite.url).reset()
    monkeypatch.setenv("LINKMEM_URL", remote_sqlite.url)
    return remote_sqlite.url


def test_commands_go_to_the_server(url: str, tmp_path: Path):
    added = data("add", "Max likes Lisbon", "--user", "alice")["results"][0]
    assert data("search", "Max", "--user", "alice")["results"][0]["id"] == added["id"]
    assert data("get", added["id"])["memory"] == "Max likes Lisbon"
    assert [e["entity"] for e in data("entities", "list", "--user", "alice")["results"]]
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"text": "Ana paints"}\n')
    assert data("import", str(notes), "--user", "ana")["memories"] == 1
    assert RemoteMemory(url).count() == 2
    run("--url", "http://127.0.0.1:1", "search", "x", "--user", "u", code=1)


def test_store_only_commands_refuse_a_url(url: str):
    result = run("doctor", code=2)
    assert "drop --url" in result.stderr
    assert "drop --url" in run("serve", code=2).stderr


def test_keys_through_the_server_then_the_key_is_required(url: str, tmp_path: Path):
    # An admin key is made on the server's own store, as its operator would.
    settings = RemoteMemory(url).status()["store"]
    assert settings["backend"] == "sqlite"
    admin = subprocess.run(
        [str(LINKMEM), "--db", settings["location"], "keys", "create", "--role", "admin", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "LINKMEM_URL": ""},
        check=True,
    )
    secret = json.loads(admin.stdout)["secret"]
    try:
        assert "API key" in run("search", "x", "--user", "u", code=1).stderr
        made = data("--api-key", secret, "keys", "create", "--tenant", "user:bob")
        assert made["key"]["tenant"] == "user:bob"
        listed = data("--api-key", secret, "keys", "list")["results"]
        assert {k["role"] for k in listed} == {"admin", "write"}
        bob = made["secret"]
        data("--api-key", bob, "add", "Bob's note", "--user", "bob")
        assert (
            "bound to user_id"
            in run("--api-key", bob, "search", "x", "--user", "alice", code=1).stderr
        )
    finally:
        keys = data("--api-key", secret, "keys", "list")["results"]
        for key in sorted(keys, key=lambda k: k["role"] == "admin"):  # its own key last
            data("--api-key", secret, "keys", "revoke", key["id"])


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path):
    result = run("serve", "--host", "0.0.0.0", code=1)
    assert "without API keys" in result.stderr and "127.0.0.1" in result.stderr


@pytest.mark.slow
def test_linkmem_serve_with_the_default_models(tmp_path: Path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKMEM_")}
    env["LINKMEM_HOME"] = str(tmp_path)
    server = subprocess.Popen(
        [str(LINKMEM), "serve", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        memory = RemoteMemory(f"http://127.0.0.1:{port}")
        wait_ready(memory.settings.url, server)
        memory.add("My sister Ana moved to Lisbon last spring", user_id="u")
        memory.add("I bought a new bike", user_id="u")
        top = memory.search("Where does Ana live?", user_id="u")["results"][0]
        assert "Lisbon" in top["memory"]
        assert "linkmem_requests_total" in httpx.get(f"{memory.settings.url}/metrics").text
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=30)
    # uvicorn shuts down cleanly on SIGTERM, then re-raises the signal it caught
    assert server.returncode in (0, -signal.SIGTERM), stderr
    assert "Finished server process" in stderr
    assert "no API keys exist" in stderr and "127.0.0.1" in stderr
