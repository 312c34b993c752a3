"""Offline retrieval evaluation (LoCoMo): data loading, metrics, runner, report and CLI.

``run_locomo`` is the library entry point; ``linkmem eval locomo`` is the command.
"""

from __future__ import annotations

from linkmem.eval.locomo import Conversation, Question, Turn, load_locomo, normalise_evidence
from linkmem.eval.metrics import aggregate, recall_at_k
from linkmem.eval.runner import ABLATIONS, run_locomo

__all__ = [
    "ABLATIONS",
    "Conversation",
    "Question",
    "Turn",
    "aggregate",
    "load_locomo",
    "normalise_evidence",
    "recall_at_k",
    "run_locomo",
]
