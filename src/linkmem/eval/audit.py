"""Evidence corrected by an audit of a LoCoMo file's answer keys.

Some questions cite the wrong turns: "When did Maria go to the beach?" cites John's reply
("... I took plenty of beach pics") where Maria's own turn says "I took it at the beach last
month". A search that ranks Maria's turn first scores 0 on it. An audit (a JSON list, one
entry per faulty question: ``question_id`` ``locomo_<conversation>_qa<question>``, both
0-based positions in the LoCoMo file, the ``question`` text, and ``correct_evidence``) lets the
evaluation score such questions on the turns that hold the answer. The file's own evidence is
the default; an audited run says so in its setup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from linkmem.eval.locomo import Conversation, normalise_evidence

_QUESTION_ID = re.compile(r"^locomo_(\d+)_qa(\d+)$")


class AuditError(ValueError):
    """The audit cannot be read, or is not of the LoCoMo file it is applied to."""


@dataclass(frozen=True)
class EvidenceFix:
    """One audited question: its position (conversation, question) in the file, its text (to
    check the audit is of this file) and the turns that hold its answer."""

    conversation: int
    question: int
    text: str
    evidence: tuple[str, ...]


def load_audit(path: str | Path) -> list[EvidenceFix]:
    """The evidence fixes of an audit file (entries without ``correct_evidence`` are about
    answers, not turns, and are skipped)."""
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise AuditError(f"cannot read the audit {path}: {e}") from e
    if not isinstance(entries, list):
        raise AuditError(f"{path} is not an audit: expected a JSON list of entries")
    return [fix for entry in entries if (fix := _fix(entry, path)) is not None]


def _fix(entry: Mapping[str, Any], path: str | Path) -> EvidenceFix | None:
    evidence = entry.get("correct_evidence")
    if not evidence:
        return None
    match = _QUESTION_ID.match(str(entry.get("question_id", "")))
    if match is None:
        raise AuditError(
            f"{path}: question_id {entry.get('question_id')!r} is not locomo_<n>_qa<m>"
        )
    raw = [evidence] if isinstance(evidence, str) else [str(e) for e in evidence]
    return EvidenceFix(int(match[1]), int(match[2]), str(entry.get("question", "")), tuple(raw))


def apply_audit(
    conversations: Sequence[Conversation], fixes: Sequence[EvidenceFix]
) -> tuple[list[Conversation], int]:
    """``conversations`` (the file's first ones, in file order) with the fixes' evidence, and
    how many questions' evidence changed. A fix for a conversation past them is ignored (a
    run on the first N); one whose question text differs from the file's is an error: the
    audit is of another file."""
    by_place = {(f.conversation, f.question): f for f in fixes}
    out, changed = [], 0
    for c_index, conv in enumerate(conversations):
        questions = list(conv.questions)
        for q_index, question in enumerate(questions):
            fix = by_place.get((c_index, q_index))
            if fix is None:
                continue
            if fix.text.strip() != question.question.strip():
                raise AuditError(
                    f"the audit's locomo_{c_index}_qa{q_index} is {fix.text!r}, the file's is "
                    f"{question.question!r}: the audit is of another file"
                )
            evidence = tuple(normalise_evidence(fix.evidence, conv.dia_ids))
            if evidence != question.evidence:
                questions[q_index] = replace(question, evidence=evidence)
                changed += 1
        out.append(replace(conv, questions=tuple(questions)))
    return out, changed
