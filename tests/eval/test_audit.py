"""An audit's corrected evidence: applied by position, checked against the question's text,
reported in the run's setup; a wrong audit is a usage error, not a traceback."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from linkmem import Memory
from linkmem.embed.fake import FakeEmbedder
from linkmem.eval import cli
from linkmem.eval.audit import AuditError, apply_audit, load_audit
from linkmem.eval.locomo import load_locomo
from linkmem.eval.runner import run_locomo

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "synthetic_conversation_small.json"
DOG = "What is the name of Alice's dog?"  # syn-1, question 0, cites D1:1
VET = "Which vet does Alice take Max to?"  # syn-1, question 3, cites D2:06


def entry(question_id: str, question: str, **fields: object) -> dict:
    return {"question_id": question_id, "question": question, "error_type": "X", **fields}


def write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(entries))
    return path


def test_fixes_replace_the_cited_turns_normalised(tmp_path: Path) -> None:
    audit = write(
        tmp_path,
        [
            entry("locomo_0_qa0", DOG, cited_evidence=["D1:1"], correct_evidence=["D1:03"]),
            entry("locomo_0_qa3", VET, correct_evidence=["D2:6"]),  # the same turns
            entry("locomo_0_qa1", "answer only", golden_answer="x"),  # no evidence: skipped
            entry("locomo_7_qa0", "a later conversation", correct_evidence=["D1:1"]),
        ],
    )
    fixes = load_audit(audit)
    assert [(f.conversation, f.question) for f in fixes] == [(0, 0), (0, 3), (7, 0)]
    conversations, changed = apply_audit(load_locomo(SYNTHETIC), fixes)
    assert changed == 1
    evidence = {q.question: q.evidence for q in conversations[0].questions}
    assert evidence[DOG] == ("D1:3",) and evidence[VET] == ("D2:6",)
    untouched = load_locomo(SYNTHETIC)
    assert conversations[1] == untouched[1]
    assert [q for q in conversations[0].questions if q.question != DOG] == [
        q for q in untouched[0].questions if q.question != DOG
    ]


def test_an_audit_of_another_file_is_refused(tmp_path: Path) -> None:
    audit = write(
        tmp_path, [entry("locomo_0_qa0", "When did Bob move?", correct_evidence=["D1:2"])]
    )
    with pytest.raises(AuditError, match="another file"):
        apply_audit(load_locomo(SYNTHETIC), load_audit(audit))


@pytest.mark.parametrize(
    "content",
    ["{not json", json.dumps({"a": 1}), json.dumps([entry("q7", DOG, correct_evidence=["D1:1"])])],
)
def test_unreadable_audits_raise_audit_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "audit.json"
    path.write_text(content)
    with pytest.raises(AuditError):
        load_audit(path)


def test_cli_wrong_audit_exits_2_with_a_message(tmp_path: Path) -> None:
    audit = write(tmp_path, [entry("locomo_0_qa0", "Who?", correct_evidence=["D1:2"])])
    args = ["locomo", "--data", str(SYNTHETIC), "--audit", str(audit), "--ablation", "bm25"]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 2
    assert "another file" in result.stderr and "Traceback" not in result.output


@pytest.mark.slow
def test_an_audited_run_scores_the_corrected_turns(tmp_path: Path) -> None:
    empty = tmp_path / "config.toml"
    empty.write_text("")

    def factory(path: Path) -> Memory:
        return Memory(path, embedder=FakeEmbedder(64), store="sqlite", config_file=empty)

    audit = write(tmp_path, [entry("locomo_0_qa0", DOG, correct_evidence=["D1:3"])])
    run = functools.partial(
        run_locomo, SYNTHETIC, ks=(25,), ablations=["bm25"], memory_factory=factory
    )
    plain, audited = run(limit_conversations=1), run(limit_conversations=1, audit=audit)
    assert plain["setup"]["audit"] is None
    assert audited["setup"]["audit"] == {"path": str(audit), "questions_corrected": 1}
    scored = {q["question"]: q for q in audited["ablations"]["bm25"]["questions"]}
    assert scored[DOG]["evidence"] == ["D1:3"]
    assert scored[DOG]["recall"]["25"] == float("D1:3" in scored[DOG]["ranking"])
    before = {q["question"]: q for q in plain["ablations"]["bm25"]["questions"]}
    assert before[DOG]["evidence"] == ["D1:1"]
    assert {q: s["ranking"] for q, s in scored.items()} == {
        q: s["ranking"] for q, s in before.items()
    }


def test_the_dev_audit_applies_to_the_dev_split() -> None:
    """The audit shipped beside the LoCoMo dev split (read in place, never copied) is of that
    file: every entry's question matches, and the beach question moves to Maria's own turn."""
    data = next((p for p in cli.default_data_candidates() if p.is_file()), None)
    audit = data.with_name("locomo-dev-audit-errors.json") if data else None
    if audit is None or not audit.is_file():
        pytest.skip("the LoCoMo dev split and its audit are not here (not shipped)")
    conversations, changed = apply_audit(load_locomo(data), load_audit(audit))
    assert changed == 58
    beach = conversations[2].questions[5]
    assert beach.question == "When did Maria go to the beach?" and beach.evidence == ("D3:14",)
