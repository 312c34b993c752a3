"""``linkmem eval``: offline retrieval benchmarks. Mounted by the main CLI as a sub-app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from linkmem.config import RetrievalConfig
from linkmem.eval.audit import AuditError
from linkmem.eval.runner import ABLATIONS, DEFAULT_KS, checked_tune, run_locomo

app = typer.Typer(
    help="Offline retrieval evaluation (LoCoMo).",
    no_args_is_help=True,
    add_completion=False,
)

#: Where the LoCoMo dev split lives, relative to the current folder and to the repository.
DEFAULT_DATA = Path("../shared/benchmarks/locomo/locomo-dev.json")
_REPO_ROOT = Path(__file__).resolve().parents[3]


@app.callback()
def _main() -> None:
    """Offline retrieval evaluation (LoCoMo)."""


def default_data_candidates() -> list[Path]:
    """The default data file resolved against the current folder, then the repository root."""
    return [Path.cwd() / DEFAULT_DATA, _REPO_ROOT / DEFAULT_DATA]


def resolve_data(data: Path | None) -> Path:
    """The data file to read; exits with code 2 and a message on stderr when it is absent."""
    candidates = [data] if data is not None else default_data_candidates()
    for path in candidates:
        if path.is_file():
            return path.resolve()
    tried = ", ".join(str(p) for p in candidates)
    typer.echo(
        f"LoCoMo data not found (tried {tried}). The data is not shipped with linkmem "
        "(CC BY-NC 4.0, evaluation only); pass the path of locomo-dev.json with --data.",
        err=True,
    )
    raise typer.Exit(code=2)


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise typer.BadParameter(f"expected positive integers like 1,5,10, got {text!r}")
    return ks


def parse_ablations(values: list[str] | None) -> list[str]:
    if not values:
        return list(ABLATIONS)
    names = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown or not names:
        raise typer.BadParameter(
            f"unknown ablation(s) {', '.join(unknown)}; choose from {', '.join(ABLATIONS)}"
        )
    return names


def parse_tune(values: list[str] | None) -> dict[str, list[float]]:
    """``["name_boost_weight=0,0.05,0.1"]`` -> ``{"name_boost_weight": [0.0, 0.05, 0.1]}``."""
    out: dict[str, list[float]] = {}
    for value in values or []:
        name, _, numbers = value.partition("=")
        try:
            out[name.strip()] = [float(n) for n in numbers.split(",") if n.strip()]
        except ValueError:
            out[name.strip()] = []
        if not name.strip() or not out[name.strip()]:
            raise typer.BadParameter(
                f"expected NAME=V1,V2,... like context_weight=0.4,0.6, got {value!r}"
            )
    return out


_KS_TEXT = ",".join(map(str, DEFAULT_KS))
_ABLATIONS_TEXT = ", ".join(ABLATIONS)


@app.command()
def locomo(
    data: Annotated[
        Path | None,
        typer.Option(help=f"LoCoMo JSON file (default: {DEFAULT_DATA}, from here or the repo)"),
    ] = None,
    k: Annotated[str, typer.Option("--k", help="Cut-offs, a comma list.")] = _KS_TEXT,
    ablation: Annotated[
        list[str] | None,
        typer.Option(help=f"Repeatable or a comma list (default: all: {_ABLATIONS_TEXT})."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the full result as JSON here.")] = None,
    limit_conversations: Annotated[
        int | None, typer.Option(min=1, help="Only the first N conversations.")
    ] = None,
    folds: Annotated[
        bool,
        typer.Option(help="Also report leave-one-conversation-out folds: mean and worst fold."),
    ] = False,
    tune: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=V1,V2,...: try these values of a RetrievalConfig constant (full system), "
            "choose one per fold on the other conversations (repeatable; implies --folds)."
        ),
    ] = None,
    audit: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="An audit of the answer keys (e.g. locomo-dev-audit-errors.json beside the "
            "data): questions that cite the wrong turns are scored on its correct_evidence.",
        ),
    ] = None,
) -> None:
    """Recall@k of the evidence turns per category, for each retrieval ablation."""
    from linkmem.eval.report import print_folds, print_report

    path = resolve_data(data)
    ks = parse_ks(k)
    names = parse_ablations(ablation)
    grid = parse_tune(tune)
    try:
        checked_tune(grid, RetrievalConfig())
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--tune") from e
    try:
        result = run_locomo(
            path,
            ks=ks,
            ablations=names,
            out=out,
            limit_conversations=limit_conversations,
            progress=lambda message: typer.echo(message, err=True),
            folds=folds,
            tune=grid,
            audit=audit,
        )
    except AuditError as e:
        raise typer.BadParameter(str(e), param_hint="--audit") from e
    print_report(result)
    if "folds" in result:
        print_folds(result)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    app()
