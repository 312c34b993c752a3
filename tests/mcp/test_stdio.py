"""``linkmem mcp`` over stdio: the SDK's client spawns the real command on a temporary store
(the fake embedder; the real spaCy extractor), and a raw client checks that stdout carries
JSON-RPC only and how soon the server answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_checks import DOG, answer, ids, ok, refused, send, spawn_raw, stdio_params, text
from typer.testing import CliRunner

from linkmem.cli import app
from linkmem.mcp_server.descriptions import TOOLS
from linkmem.mcp_server.scope import login_name


def test_a_session_over_stdio(tmp_path: Path):
    async def main() -> None:
        async with Client(stdio_params(tmp_path, "--user", "alice"), mode="legacy") as client:
            call = client.call_tool
            assert [t.name for t in (await client.list_tools()).tools] == list(TOOLS)
            [dog] = ids(await call("add_memory", {"text": DOG, "metadata": {"topic": "pets"}}))
            await call("add_memory", {"text": "I moved to Lisbon in May"})

            found = await call("search_memory", {"query": "how is my dog?"})
            assert ok(found)["results"][0]["id"] == dog
            assert text(found).splitlines()[1].endswith(f"{dog}: {DOG}")
            about = ok(await call("entity_memories", {"entity": "Max"}))
            assert [r["id"] for r in about["results"]] == [dog]
            assert ok(await call("get_memory", {"memory_id": dog}))["user_id"] == "alice"

            updated = ok(await call("update_memory", {"memory_id": dog, "text": "Max is 4"}))
            assert updated["results"][0]["memory"] == "Max is 4"
            assert ids(await call("delete_memory", {"memory_id": dog})) == [dog]

            refused(await call("get_memory", {"memory_id": dog}), "no memory with id")
            refused(await call("search_memory", {"query": 42}), "query")
            refused(await call("list_memories", {"user_id": "bob"}), "bound to user_id='alice'")

    anyio.run(main)


@pytest.mark.slow
def test_the_real_models_find_the_dog_by_meaning(tmp_path: Path):
    """No word of the question is in the memory: the embedding finds it."""
    notes = [
        "I adopted Max, a golden retriever puppy",
        "I moved to Lisbon in May",
        "My sister Ana works as a nurse",
        "We had pasta for dinner",
    ]

    async def main() -> None:
        params = stdio_params(tmp_path, "--user", "alice", embedder="onnx")
        async with Client(params) as client:
            for note in notes:
                ok(await client.call_tool("add_memory", {"text": note}))
            found = ok(await client.call_tool("search_memory", {"query": "how is my dog?"}))
            assert found["results"][0]["memory"] == notes[0]

    anyio.run(main)


def test_stdout_is_json_rpc_only(tmp_path: Path):
    started = time.perf_counter()
    process = spawn_raw(tmp_path, "--user", "alice")
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "0"}
        send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert answer(process, 1)["result"]["serverInfo"]["name"] == "linkmem"
        initialized = time.perf_counter()
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        add = {"name": "add_memory", "arguments": {"text": DOG}}
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": add})
        result = answer(process, 2)["result"]
        first_result = time.perf_counter()
        assert not result.get("isError") and result["structuredContent"]["results"]
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
    assert process.stdout.read() == ""  # nothing after the answers either
    print(  # the cold start, in the test log (-rP); benchmarks/bench_mcp_start.py measures it
        f"linkmem mcp: initialize answered {initialized - started:.2f} s after spawn; "
        f"first tool result {first_result - started:.2f} s after spawn (fake embedder, spaCy)"
    )


def test_a_bad_store_is_one_line_on_stderr(tmp_path: Path):
    (tmp_path / "memory.db").write_text("not a database")
    process = spawn_raw(tmp_path, "--user", "alice")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and out == ""
    assert err.strip().splitlines()[-1].startswith("Error: ") and "Traceback" not in err


def test_print_config_registers_this_install(tmp_path: Path):
    db = tmp_path / "notes.db"
    runner = CliRunner()
    claude = runner.invoke(app, ["--db", str(db), "mcp", "-u", "alice", "--print-config", "claude"])
    assert claude.exit_code == 0, claude.output
    server = json.loads(claude.stdout)["mcpServers"]["linkmem"]
    assert Path(server["command"]).is_absolute() and Path(server["command"]).exists()
    assert server["args"] == ["--db", str(db), "mcp", "--user", "alice"]
    assert server["env"]["LINKMEM_HOME"]  # the tests' isolated home travels along

    vscode = runner.invoke(app, ["mcp", "--agent", "coder", "--print-config", "vscode"])
    server = json.loads(vscode.stdout)["servers"]["linkmem"]
    assert server["type"] == "stdio" and server["args"] == ["mcp", "--agent", "coder"]

    cursor = runner.invoke(app, ["mcp", "--print-config", "cursor"])
    assert json.loads(cursor.stdout)["mcpServers"]["linkmem"]["args"][-1] == login_name()
    assert runner.invoke(app, ["mcp", "--print-config", "emacs"]).exit_code == 2


def test_the_config_file_binds_the_scope_when_no_flag_does(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text('[mcp]\nuser_id = "carol"\nagent_id = "coach"\n')
    runner = CliRunner()
    base = ["--config", str(config), "mcp", "--print-config", "claude"]
    server = json.loads(runner.invoke(app, base).stdout)["mcpServers"]["linkmem"]
    assert server["args"][-5:] == ["mcp", "--user", "carol", "--agent", "coach"]
    flagged = runner.invoke(app, [*base[:3], "--user", "dan", *base[3:]])
    assert json.loads(flagged.stdout)["mcpServers"]["linkmem"]["args"][-2:] == ["--user", "dan"]
