"""Leave-one-conversation-out folds and per-fold tuning: hand-computed numbers, then an end-to-end
run on the small synthetic set (FakeEmbedder + the real spaCy extractor)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from typer.testing import CliRunner

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.eval import cli
from linkmem.eval.folds import choose, fold_table, margins, spread, tune_folds
from linkmem.eval.report import folds_markdown, print_folds
from linkmem.eval.runner import checked_tune, run_locomo

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "synthetic_conversation_small.json"


def q(sample: str, category: int, r10: float) -> dict:
    return {"sample_id": sample, "category": category, "recall": {"10": r10}}


def test_spread_is_the_mean_over_folds_and_the_worst_fold() -> None:
    assert spread({"a": 0.5, "b": 1.0, "c": None}) == {
        "mean": 0.75,
        "worst": 0.5,
        "worst_fold": "a",
    }
    assert spread({"a": None}) == {"mean": None, "worst": None, "worst_fold": None}


def test_fold_table_holds_each_conversation_out() -> None:
    full = [q("a", 1, 1.0), q("a", 4, 0.5), q("b", 2, 0.0), q("b", 5, 1.0)]
    base = [q("a", 1, 0.5), q("a", 4, 0.5), q("b", 2, 0.5), q("b", 5, 0.0)]
    table = fold_table({"full": full, "dense+bm25": base}, ["1-4", "5"], [10])
    assert table["folds"] == ["a", "b"]
    assert table["recall"]["full"]["1-4"]["10"] == {"a": 0.75, "b": 0.0}
    assert table["recall"]["full"]["5"]["10"] == {"a": None, "b": 1.0}
    # Each fold counts once: (0.75 + 0.0) / 2, not the pooled 0.5.
    assert table["spread"]["full"]["1-4"]["10"] == {"mean": 0.375, "worst": 0.0, "worst_fold": "b"}
    margin = margins(table, "full", "dense+bm25", "1-4", 10)
    assert margin["per_fold"] == {"a": 0.25, "b": -0.5}
    assert (margin["worst"], margin["worst_fold"]) == (-0.5, "b")


def test_choose_uses_only_the_training_folds_and_ties_keep_the_default() -> None:
    # Value 1.0 is best on a and c, 0.0 on b; held out, each fold sees only the others.
    grid = {
        0.0: [q("a", 1, 0.0), q("b", 1, 1.0), q("c", 1, 0.0)],
        1.0: [q("a", 1, 1.0), q("b", 1, 0.0), q("c", 1, 1.0)],
        0.5: [q("a", 1, 0.5), q("b", 1, 0.5), q("c", 1, 0.5)],
    }
    assert choose(grid, "a", "1-4", 10, default=0.5) == (0.5, 0.5)  # b+c: all tie at 0.5
    assert choose(grid, "b", "1-4", 10, default=0.5) == (1.0, 1.0)
    tuned = tune_folds(grid, default=0.5)
    assert {f: d["chosen"] for f, d in tuned["folds"].items()} == {"a": 0.5, "b": 1.0, "c": 0.5}
    assert not tuned["stable"]
    assert tuned["folds"]["b"]["held_out"] == 0.0 and tuned["folds"]["b"]["held_out_default"] == 0.5
    assert tuned["held_out"]["mean"] == pytest.approx(1 / 3)
    assert tuned["all_values"]["1.0"]["worst"] == 0.0
    with pytest.raises(ValueError, match="default"):
        tune_folds(grid, default=0.2)


def test_checked_tune_adds_the_default_and_casts_ints() -> None:
    from linkmem.config import RetrievalConfig

    got = checked_tune({"context_window": [1, 3.0], "hop_weight": [0.3]}, RetrievalConfig())
    assert got == {"context_window": [1, 2, 3], "hop_weight": [0.3, 0.5]}
    with pytest.raises(ValueError, match="unknown retrieval constant"):
        checked_tune({"no_such": [1]}, RetrievalConfig())


def test_cli_refuses_a_bad_tune_before_loading_anything() -> None:
    runner = CliRunner()
    for bad in ("hop_weight", "no_such=1", "hop_weight=x"):
        got = runner.invoke(cli.app, ["locomo", "--data", str(SYNTHETIC), "--tune", bad])
        assert got.exit_code == 2, got.output


def fake_memory(path: Path, config_file: Path) -> Memory:
    return Memory(path, embedder=FakeEmbedder(64), store="sqlite", config_file=config_file)


@pytest.mark.slow
def test_run_with_folds_and_tuning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "config.toml"
    empty.write_text("")
    factory = functools.partial(fake_memory, config_file=empty)
    result = run_locomo(
        SYNTHETIC,
        ks=[10, 25],
        ablations=["dense+bm25", "full"],
        memory_factory=factory,
        tune={"name_boost_weight": [0.0], "context_weight": [0.0]},
    )
    folds = result["folds"]
    assert folds["folds"] == ["syn-1", "syn-2"]
    full = result["ablations"]["full"]["questions"]
    held = [x["recall"]["10"] for x in full if x["sample_id"] == "syn-2" and x["category"] < 5]
    assert folds["recall"]["full"]["1-4"]["10"]["syn-2"] == pytest.approx(sum(held) / len(held))
    tuned = result["tuning"]["context_weight"]
    assert tuned["values"] == [0.0, 0.6] and set(tuned["folds"]) == {"syn-1", "syn-2"}
    # The default's grid entry is the full ablation itself, not a second run.
    assert tuned["recall"]["0.6"] == result["ablations"]["full"]["recall"]
    assert result["tuning"]["name_boost_weight"]["values"] == [0.0, 0.1]
    print_folds(result)
    out = capsys.readouterr().out
    assert "Leave one conversation out" in out and "Per-fold tuning" in out
    markdown = folds_markdown(result, "1-4", [10])
    assert markdown.splitlines()[0] == "| held out | dense+bm25 @10 | full @10 |"
    assert markdown.splitlines()[-1].startswith("| **worst** |")
