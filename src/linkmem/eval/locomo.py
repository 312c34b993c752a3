"""LoCoMo data: conversations -> turns and questions, with evidence ids normalised.

The file is a JSON list of samples, each with ``sample_id``, ``conversation``
(``speaker_a``, ``speaker_b``, ``session_<n>`` turn lists and ``session_<n>_date_time``) and
``qa`` (``question``, ``evidence``, ``category`` and an answer). Evidence ids are normalised as
the dataset README says: split ``"D8:6; D9:17"`` on ``;`` or spaces, ``"D:11:26"`` ->
``"D11:26"``, ``"D30:05"`` -> ``"D30:5"``, and drop a bare ``"D"`` and ids that are not a turn of
the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Category id -> name (verified against the data, the official eval code and the paper).
CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SEPARATORS = re.compile(r"[;\s]+")


@dataclass(frozen=True)
class Turn:
    """One dialogue turn: its id (``D<session>:<turn>``), speaker and text (with any photo
    caption appended), session number and the session's date as written in the data."""

    dia_id: str
    speaker: str
    text: str
    session: int
    session_date: str

    @property
    def memory_text(self) -> str:
        """The text stored as one memory: ``"<speaker>: <text>"``."""
        return f"{self.speaker}: {self.text}"

    @property
    def metadata(self) -> dict[str, Any]:
        return {"dia_id": self.dia_id, "session": self.session, "session_date": self.session_date}


@dataclass(frozen=True)
class Question:
    """One QA. ``evidence`` is already normalised; empty means "left out of recall"."""

    index: int
    question: str
    category: int
    evidence: tuple[str, ...]
    raw_evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def dia_ids(self) -> frozenset[str]:
        return frozenset(t.dia_id for t in self.turns)


def turn_text(turn: Mapping[str, Any]) -> str:
    """A turn's text, with ``" [shares a photo of: <caption>]"`` when it carries an image."""
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo of: {str(caption).strip()}]".strip()
    return text


def normalise_evidence_id(raw: str) -> str | None:
    """``"D:11:26"`` -> ``"D11:26"``, ``"D30:05"`` -> ``"D30:5"``; None when not an id."""
    match = _EVIDENCE_ID.match(raw.strip())
    if match is None:
        return None
    return f"D{int(match.group(1))}:{int(match.group(2))}"


def normalise_evidence(raw: str | Iterable[str], known: Iterable[str]) -> list[str]:
    """Split, normalise, de-duplicate (first occurrence kept) and keep only ``known`` ids."""
    known_ids = set(known)
    items = [raw] if isinstance(raw, str) else list(raw)
    out: list[str] = []
    for item in items:
        for part in _SEPARATORS.split(str(item)):
            dia_id = normalise_evidence_id(part) if part else None
            if dia_id is not None and dia_id in known_ids and dia_id not in out:
                out.append(dia_id)
    return out


def parse_turns(conversation: Mapping[str, Any]) -> list[Turn]:
    """Every turn of every session, sessions in numeric order."""
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION_KEY.match(key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        date = str(conversation.get(f"{key}_date_time", ""))
        for turn in conversation[key]:
            turns.append(
                Turn(str(turn["dia_id"]), str(turn["speaker"]), turn_text(turn), number, date)
            )
    return turns


def parse_questions(qa: Sequence[Mapping[str, Any]], known: frozenset[str]) -> list[Question]:
    out = []
    for index, item in enumerate(qa):
        raw = item.get("evidence") or []
        raw_list = [raw] if isinstance(raw, str) else [str(r) for r in raw]
        out.append(
            Question(
                index=index,
                question=str(item["question"]),
                category=int(item["category"]),
                evidence=tuple(normalise_evidence(raw_list, known)),
                raw_evidence=tuple(raw_list),
            )
        )
    return out


def parse_sample(sample: Mapping[str, Any]) -> Conversation:
    conversation = sample["conversation"]
    turns = parse_turns(conversation)
    known = frozenset(t.dia_id for t in turns)
    speakers = (str(conversation.get("speaker_a", "")), str(conversation.get("speaker_b", "")))
    questions = parse_questions(sample.get("qa", []), known)
    return Conversation(str(sample["sample_id"]), speakers, tuple(turns), tuple(questions))


def load_locomo(path: str | Path, limit: int | None = None) -> list[Conversation]:
    """Read a LoCoMo JSON file (optionally only its first ``limit`` conversations)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path} is not a LoCoMo file: expected a JSON list of conversations")
    samples = data if limit is None else data[:limit]
    return [parse_sample(s) for s in samples]
