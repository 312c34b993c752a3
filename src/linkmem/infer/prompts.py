"""The two prompts of ``infer=True`` and the JSON schemas of their answers.

The schemas are built per call: message numbers and memory labels are enums of exactly what
the model was shown, so a server with structured output cannot even produce an unknown one
(the answer is still checked in ``extract.py`` / ``reconcile.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EXTRACT_SYSTEM = """\
You turn a conversation into short, self-contained facts worth remembering about the people \
in it: who they are, what they like or dislike, what they own, plan, decided or did, names of \
family, friends, pets and places, dates of events.

Rules:
- One fact per item, one sentence, at most 30 words.
- Name the person the fact is about (use the speaker's name when one is given; otherwise \
"User" for the user and "Assistant" for the assistant).
- Turn relative dates ("yesterday", "next week") into dates, using the date of the message.
- Write every fact in the language of the message it comes from; never translate.
- Keep only what the messages state. Skip greetings, questions, small talk and anything the \
assistant merely suggests.
- "sources" lists the numbers of the messages the fact comes from.
- Only when there is nothing worth remembering at all, answer {"facts": []}.

Example conversation:
[1] 2024-03-02 Sam (user): My sister Jo adopted a cat called Pixel last week.
[2] 2024-03-02 assistant: How lovely! Is Pixel a kitten?
[3] 2024-03-02 Sam (user): Yes, and I am flying to Oslo to see them.
Example answer:
{"facts": [{"text": "Sam's sister Jo adopted a cat called Pixel in late February 2024.", \
"sources": [1]}, {"text": "Pixel is a kitten.", "sources": [2, 3]}, {"text": "Sam is flying \
to Oslo to visit Jo.", "sources": [3]}]}

Answer with JSON only, in that shape."""

RECONCILE_SYSTEM = """\
You keep a memory store current. You get NEW FACTS, each with a label like "f1", and \
EXISTING MEMORIES, each with a label like "m1". Decide for every new fact exactly one action:

- ADD: the fact is new information and is stored as it is. "memory" and "text" are "".
- UPDATE: the fact changes or refines one existing memory (a new city, a changed \
preference, more detail). "memory" is that memory's label; "text" is the memory rewritten to \
be correct now, one sentence.
- DELETE: the fact says one existing memory is no longer true and gives nothing new to keep. \
"memory" is that memory's label; "text" is "".
- NONE: an existing memory already says this. "memory" is that memory's label (or ""), \
"text" is "".

Rules:
- Every fact gets exactly one decision. A memory is the target of at most one UPDATE or \
DELETE.
- Use only labels that appear below. Never make up a label.
- Keep the language of the fact.

Answer with JSON only, one entry per fact label: {"decisions": {"f1": {"event": "UPDATE", \
"memory": "m2", "text": "..."}, "f2": {"event": "ADD", "memory": "", "text": ""}}}"""


def render_conversation(lines: Sequence[tuple[int, str, str, str]]) -> str:
    """``(number, date, speaker, content)`` per message -> the extraction prompt's user part."""
    out = ["Conversation (message number, date, speaker: text):"]
    for number, date, speaker, content in lines:
        out.append(f"[{number}] {date} {speaker}: {content}")
    return "\n".join(out)


def render_reconciliation(facts: Sequence[str], memories: Sequence[str]) -> str:
    """The reconciliation prompt's user part: labelled facts and labelled memories."""
    out = ["NEW FACTS:"]
    out += [f"{fact_label(i)}: {text}" for i, text in enumerate(facts)]
    out.append("")
    out.append("EXISTING MEMORIES:")
    out += [f"{memory_label(i)}: {text}" for i, text in enumerate(memories)]
    return "\n".join(out)


def fact_label(index: int) -> str:
    return f"f{index + 1}"


def memory_label(index: int) -> str:
    return f"m{index + 1}"


def extraction_schema(message_count: int) -> dict[str, Any]:
    fact = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "sources": {
                "type": "array",
                "items": {"type": "integer", "enum": list(range(1, message_count + 1))},
            },
        },
        "required": ["text", "sources"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": fact}},
        "required": ["facts"],
        "additionalProperties": False,
    }


def reconciliation_schema(fact_count: int, memory_count: int) -> dict[str, Any]:
    """``{"decisions": {"f1": {...}, "f2": {...}}}``: one required key per fact, so a
    constrained model cannot skip a fact or decide one twice."""
    decision = {
        "type": "object",
        "properties": {
            "event": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
            "memory": {
                "type": "string",
                "enum": ["", *(memory_label(i) for i in range(memory_count))],
            },
            "text": {"type": "string"},
        },
        "required": ["event", "memory", "text"],
        "additionalProperties": False,
    }
    labels = [fact_label(i) for i in range(fact_count)]
    per_fact = {
        "type": "object",
        "properties": {label: decision for label in labels},
        "required": labels,
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"decisions": per_fact},
        "required": ["decisions"],
        "additionalProperties": False,
    }
