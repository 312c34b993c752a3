"""LoCoMo evaluation: evidence normalisation, recall math, an end-to-end run on the synthetic
set (FakeEmbedder + the real spaCy extractor) and the CLI's missing-data exit."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.eval import cli
from linkmem.eval.locomo import load_locomo, normalise_evidence, normalise_evidence_id, turn_text
from linkmem.eval.metrics import aggregate, counts, percentile, recall_at_k
from linkmem.eval.runner import ABLATIONS, add_conversations, run_locomo

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "synthetic_conversation_small.json"
KNOWN = {"D8:6", "D9:17", "D11:26", "D30:5", "D1:1"}


# evidence normalisation ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D3:7", "D3:7"),
        ("D:11:26", "D11:26"),
        ("D30:05", "D30:5"),
        (" D08:006 ", "D8:6"),
        ("D", None),
        ("", None),
        ("X3:7", None),
        ("D3", None),
    ],
)
def test_normalise_evidence_id(raw: str, expected: str | None) -> None:
    assert normalise_evidence_id(raw) == expected


def test_evidence_split_on_semicolons_and_spaces() -> None:
    assert normalise_evidence(["D8:6; D9:17"], KNOWN) == ["D8:6", "D9:17"]
    assert normalise_evidence("D9:17 D8:6", KNOWN) == ["D9:17", "D8:6"]


def test_evidence_fixes_drops_and_dedupes() -> None:
    raw = ["D:11:26", "D30:05", "D", "D99:1", "D1:1", "D1:01"]
    assert normalise_evidence(raw, KNOWN) == ["D11:26", "D30:5", "D1:1"]
    assert normalise_evidence(["D"], KNOWN) == []
    assert normalise_evidence([], KNOWN) == []


def test_turn_text_appends_the_photo_caption() -> None:
    assert turn_text({"text": "Look!", "blip_caption": "a dog"}) == (
        "Look! [shares a photo of: a dog]"
    )
    assert turn_text({"text": "No photo."}) == "No photo."


def test_synthetic_set_loads_and_normalises() -> None:
    conversations = load_locomo(SYNTHETIC)
    assert [c.sample_id for c in conversations] == ["syn-1", "syn-2"]
    first = conversations[0]
    assert len(first.turns) == 30 and {t.session for t in first.turns} == {1, 2, 3}
    photo = next(t for t in first.turns if t.dia_id == "D1:3")
    assert photo.memory_text.startswith("Alice: Max is a golden retriever")
    assert photo.memory_text.endswith(
        "[shares a photo of: a photo of a golden retriever lying on a blue blanket]"
    )
    assert photo.metadata == {
        "dia_id": "D1:3",
        "session": 1,
        "session_date": "2:15 pm on 3 March, 2023",
    }
    evidence = {q.question: q.evidence for c in conversations for q in c.questions}
    assert evidence["What did Max learn while Bob was in Lisbon, and what did he chew?"] == (
        "D3:3",
        "D2:4",
    )
    assert evidence["When did Bob finish the Boston marathon?"] == ("D2:1",)
    assert evidence["Which vet does Alice take Max to?"] == ("D2:6",)
    assert evidence["Which pets do Alice and Bob have?"] == ("D1:1", "D3:8")
    assert evidence["What breed is Max?"] == ("D1:3",)
    assert evidence["Would Priya enjoy a classical music festival?"] == ()
    assert load_locomo(SYNTHETIC, limit=1)[0].sample_id == "syn-1"


# recall math ---------------------------------------------------------------------------------
def test_recall_at_k_on_a_hand_made_ranking() -> None:
    ranking = ["x", "a", "y", "b", "z"]
    assert recall_at_k(["a", "b"], ranking, 1) == 0.0
    assert recall_at_k(["a", "b"], ranking, 2) == 0.5
    assert recall_at_k(["a", "b"], ranking, 4) == 1.0
    assert recall_at_k(["a", "b", "c"], ranking, 50) == pytest.approx(2 / 3)
    assert recall_at_k(["a", "a"], ranking, 2) == 1.0
    with pytest.raises(ValueError):
        recall_at_k(["a"], ranking, 0)
    with pytest.raises(ValueError):
        recall_at_k([], ranking, 5)


def test_aggregate_per_category_headline_and_all() -> None:
    questions = [
        {"category": 1, "recall": {"5": 1.0, "10": 1.0}},
        {"category": 1, "recall": {"5": 0.0, "10": 0.5}},
        {"category": 2, "recall": {"5": 0.5, "10": 1.0}},
        {"category": 4, "recall": {"5": 0.25, "10": 0.25}},
        {"category": 5, "recall": {"5": 1.0, "10": 1.0}},
    ]
    result = aggregate(questions, [5, 10])
    assert result["1"] == {"5": 0.5, "10": 0.75}
    assert result["2"] == {"5": 0.5, "10": 1.0}
    assert result["3"] == {"5": None, "10": None}
    assert result["4"] == {"5": 0.25, "10": 0.25}
    assert result["5"] == {"5": 1.0, "10": 1.0}
    # 1-4 averages questions (not category means): (1 + 0 + 0.5 + 0.25) / 4
    assert result["1-4"] == {"5": pytest.approx(0.4375), "10": pytest.approx(0.6875)}
    assert result["all"] == {"5": pytest.approx(0.55), "10": pytest.approx(0.75)}
    assert counts(questions) == {"1": 2, "2": 1, "3": 0, "4": 1, "5": 1, "1-4": 4, "all": 5}


def test_percentile_interpolates() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


# end to end ----------------------------------------------------------------------------------
def fake_memory(path: Path, config_file: Path) -> Memory:
    """FakeEmbedder, the default (real spaCy) extractor, SQLite at ``path``."""
    return Memory(path, embedder=FakeEmbedder(64), store="sqlite", config_file=config_file)


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory):
    empty = tmp_path_factory.mktemp("cfg") / "config.toml"
    empty.write_text("")
    return functools.partial(fake_memory, config_file=empty)


@pytest.fixture(scope="module")
def result(factory, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("out") / "locomo.json"
    return run_locomo(SYNTHETIC, memory_factory=factory, out=out)


@pytest.mark.slow
def test_run_structure(result: dict) -> None:
    assert result["ks"] == [1, 5, 10, 25, 50]
    setup = result["setup"]
    assert setup["conversations"] == ["syn-1", "syn-2"]
    assert (setup["memories"], setup["questions"], setup["questions_scored"]) == (60, 17, 15)
    assert setup["questions_without_evidence"] == 2
    assert setup["embedder"] == "fake:64/64" and "spaCy" in setup["entities"]
    assert list(result["ablations"]) == list(ABLATIONS)
    timing = result["timing"]
    assert timing["add_seconds"] > 0 and timing["adds_per_second"] > 0
    assert set(timing["add_per_conversation"]) == {"syn-1", "syn-2"}
    for data in result["ablations"].values():
        assert data["counts"] == {"1": 4, "2": 3, "3": 1, "4": 5, "5": 2, "1-4": 13, "all": 15}
        assert len(data["questions"]) == 15
        assert data["search_ms"]["n"] == 15 and data["search_ms"]["p95"] >= data["search_ms"]["p50"]
        assert set(data["recall"]) == {"1", "2", "3", "4", "5", "1-4", "all"}


@pytest.mark.slow
def test_run_rankings_and_recall_by_hand(result: dict) -> None:
    dense = result["ablations"]["dense"]
    by_question = {q["question"]: q for q in dense["questions"]}
    q = by_question["What did Max learn while Bob was in Lisbon, and what did he chew?"]
    assert q["evidence"] == ["D3:3", "D2:4"] and q["category"] == 1
    ranking = q["ranking"]
    # Every turn of the conversation is a dense candidate: all 30, each once.
    assert len(ranking) == 30 and len(set(ranking)) == 30
    positions = sorted(ranking.index(e) + 1 for e in q["evidence"])
    for k in (1, 5, 10, 25, 50):
        assert q["recall"][str(k)] == sum(p <= k for p in positions) / 2
    assert all(x["recall"]["50"] == 1.0 for x in dense["questions"])
    headline = [x["recall"]["10"] for x in dense["questions"] if x["category"] <= 4]
    assert dense["recall"]["1-4"]["10"] == pytest.approx(sum(headline) / len(headline))


@pytest.mark.slow
def test_a_turn_is_linked_to_its_speaker_unless_it_is_about_the_listener(
    factory, tmp_path: Path
) -> None:
    conversation = load_locomo(SYNTHETIC)[0]
    memory = factory(tmp_path / "links.db")
    add_conversations(memory, [conversation], lambda _: None)
    scope = {"user_id": conversation.sample_id}
    linked = {}
    for speaker in conversation.speakers:
        found = memory.entity_memories(speaker, **scope)
        assert found["entity"]["kind"] == "PROPER"
        linked[speaker] = {m["metadata"]["dia_id"] for m in found["results"]}
        assert linked[speaker] <= {t.dia_id for t in conversation.turns if t.speaker == speaker}
    # "I finally adopted a dog", "Max is a golden retriever", "My teacher Rosa says ..."
    assert {"D1:1", "D1:3", "D1:9", "D3:5"} <= linked["Alice"]
    assert {"D1:4", "D1:6", "D3:8"} <= linked["Bob"]
    # "How many miles are you running each week?", "You should! Cats are easier ..."
    assert not {"D1:5", "D2:8"} & linked["Alice"]
    # "That's wonderful, Alice! What kind of dog is Max?" names neither speaker's own doings
    assert not {"D1:2", "D1:8", "D2:3"} & (linked["Alice"] | linked["Bob"])


@pytest.mark.slow
def test_run_writes_the_json(result: dict, tmp_path: Path, factory) -> None:
    out = tmp_path / "sub" / "r.json"
    small = run_locomo(
        SYNTHETIC,
        ks=(5, 1),
        ablations=["bm25"],
        memory_factory=factory,
        out=out,
        limit_conversations=1,
    )
    assert json.loads(out.read_text()) == small
    assert small["ks"] == [1, 5] and list(small["ablations"]) == ["bm25"]
    assert small["setup"]["conversations"] == ["syn-1"]


def test_run_rejects_unknown_ablation_and_bad_k(factory) -> None:
    with pytest.raises(ValueError, match="unknown ablation"):
        run_locomo(SYNTHETIC, ablations=["bm26"], memory_factory=factory)
    with pytest.raises(ValueError, match="positive"):
        run_locomo(SYNTHETIC, ks=[0, 5], memory_factory=factory)


# CLI -----------------------------------------------------------------------------------------
def test_cli_missing_file_exits_2_with_a_message(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(cli.app, ["locomo", "--data", str(missing)])
    assert result.exit_code == 2
    assert "LoCoMo data not found" in result.stderr and str(missing) in result.stderr
    assert "Traceback" not in result.output


def test_cli_missing_default_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "default_data_candidates", lambda: [tmp_path / "a.json"])
    result = CliRunner().invoke(cli.app, ["locomo"])
    assert result.exit_code == 2 and "--data" in result.stderr


def test_cli_unknown_ablation_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        cli.app, ["locomo", "--data", str(SYNTHETIC), "--ablation", "dense,nope"]
    )
    assert result.exit_code == 2 and "nope" in result.stderr


@pytest.mark.slow
def test_cli_runs_and_writes_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory) -> None:
    monkeypatch.setattr(cli, "run_locomo", functools.partial(run_locomo, memory_factory=factory))
    out = tmp_path / "r.json"
    args = [
        "locomo",
        "--data",
        str(SYNTHETIC),
        "--k",
        "1,5",
        "--ablation",
        "dense",
        "--ablation",
        "bm25,full",
        "--out",
        str(out),
        "--limit-conversations",
        "1",
    ]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    assert "LoCoMo recall@5" in result.stdout
    saved = json.loads(out.read_text())
    assert saved["ks"] == [1, 5] and list(saved["ablations"]) == ["dense", "bm25", "full"]
