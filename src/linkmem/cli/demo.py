"""``linkmem demo``: remember a short conversation in a throwaway store, then ask it questions.

It runs on the configured models (the offline MiniLM embedder and spaCy by default) and never
touches the user's own store.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from linkmem.cli import render
from linkmem.cli.app import app, global_options
from linkmem.cli.options import Json
from linkmem.memory import Memory

USER = "sam"

CONVERSATION = [
    {"role": "user", "content": "I adopted a golden retriever named Max last spring."},
    {"role": "user", "content": "Max loves chasing tennis balls at Riverside Park."},
    {"role": "user", "content": "The vet said Max needs a special diet for his sensitive stomach."},
    {"role": "user", "content": "My sister Emma lives in Lisbon and works as an architect."},
    {"role": "user", "content": "I'm flying to Lisbon in June to surprise Emma on her birthday."},
    {"role": "user", "content": "I work as a data engineer at Northwind Labs."},
    {
        "role": "user",
        "content": "Priya, my manager at Northwind, wants me to lead the new streaming pipeline.",
    },
    {"role": "user", "content": "I'm allergic to peanuts, so I always check food labels."},
    {"role": "user", "content": "On weekends I play bass in a jazz band called The Blue Notes."},
    {"role": "user", "content": "My neighbour's puppy barks all night and keeps me awake."},
]

QUESTIONS = [
    "How is Max doing?",  # an entity: every memory linked to Max gets the boost
    "What should I pack for the trip to see Emma?",
    "What's going on at Northwind?",  # a similar entity (Northwind Labs) gets a smaller boost
    "Does the dog have any health issues?",  # no entity: meaning alone
    "Which food should I avoid?",
]


def run_demo(memory: Memory, top_k: int = 3) -> dict[str, Any]:
    """Add the conversation, then search each question; returns everything shown."""
    started = time.perf_counter()
    added = memory.add(CONVERSATION, user_id=USER)["results"]
    seconds = time.perf_counter() - started
    entities = memory.entities(user_id=USER, limit=8)["results"]
    answers = [
        {"question": q, **memory.search(q, user_id=USER, top_k=top_k, explain=True)}
        for q in QUESTIONS
    ]
    return {
        "memories": added,
        "add_seconds": round(seconds, 3),
        "entities": entities,
        "questions": answers,
        "status": memory.status(),
    }


@app.command()
def demo(
    ctx: typer.Context,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="Answers per question.")] = 3,
    as_json: Json = False,
) -> None:
    """Try linkmem on a short conversation in a throwaway store.

    The conversation is remembered, then questions are answered from it; your own store is
    not touched. Each answer shows its score parts: dense (meaning), bm25 (shared words) and
    the entity boost (an entity of the question linked to the memory).
    """
    opts = global_options(ctx)
    with tempfile.TemporaryDirectory(prefix="linkmem-demo-") as tmp:
        path = Path(tmp) / "demo.db"
        with Memory(path, config_file=opts.config, store="sqlite") as memory:
            result = run_demo(memory, top_k)
    render.emit(result, as_json, show)


def show(result: dict[str, Any]) -> None:
    out = render.console()
    status = result["status"]
    out.print(
        "[bold]linkmem demo[/bold]  [dim](a throwaway store in a temp folder; "
        "your own store is not touched)[/dim]"
    )
    out.print(
        f"[dim]models: {escape(status['embedder']['model'])} · "
        f"{escape(str(status['entities']))}[/dim]"
    )
    out.print()
    out.print(f'[bold]{USER.title()}[/bold] told the assistant (user_id="{USER}"):')
    for i, row in enumerate(result["memories"], 1):
        out.print(f"  [dim]{i:>2}[/dim]  {escape(row['memory'])}")
    out.print()
    shared = [e for e in result["entities"] if e["link_count"] > 1]
    linked = " · ".join(
        f"[magenta]{escape(e['entity'])}[/magenta] ×{e['link_count']}" for e in shared
    )
    total = status["store"].get("entities")
    out.print(
        f"Stored {len(result['memories'])} memories in {result['add_seconds']:.2f} s"
        + (f", linked to {total} entities" if total is not None else "")
        + (f". Shared entities: {linked}" if linked else ".")
    )
    out.print(
        "[dim]Columns: dense = meaning (cosine) · bm25 = shared words · boost = the "
        "question names an entity (entity column) that the memory is linked to.[/dim]"
    )
    for answer in result["questions"]:
        out.print()
        render.hits(answer, explain=True, title=f"[bold]Q: {escape(answer['question'])}[/bold]")
    out.print()
    out.print(next_steps(sys.argv[0], shutil.which("linkmem")))


def next_steps(invoked: str, on_path: str | None) -> str:
    """The "Next:" line, naming linkmem the way this shell can run it: ``linkmem`` when the
    PATH finds this program, else the path it was started by (and how to activate its venv)."""
    program = Path(invoked)
    found = on_path is not None and Path(on_path).resolve() == program.resolve()
    command = "linkmem" if found or program.name != "linkmem" else escape(invoked)
    line = (
        f'Next: [bold]{command} add "Max learned to fetch" -u you[/bold], then '
        f'[bold]{command} search "How is Max?" -u you --explain[/bold]'
    )
    activate = program.parent / "activate"
    if command != "linkmem" and activate.is_file():
        hint = f"[bold]. {escape(str(activate))}[/bold]"
        line += f"\n[dim](or run {hint} once; then plain linkmem works)[/dim]"
    return line
