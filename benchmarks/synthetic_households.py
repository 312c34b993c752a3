"""A second seeded synthetic set in the LoCoMo JSON format, built unlike the first (issue 14).

``synthetic_conversations.py`` has two friends, one script language, "Leo / Leonie" name decoys
and a third of the facts in pronoun follow-ups. This one has three relationships (flatmates, a
parent and an adult child, a coach and an athlete), 12 sessions stamped in ISO form, its own
cast, topics and hobbies, and the phenomena entity linking claims to handle at modest rates:
aliases introduced in the text ("a lurcher named Pickle" -> "the dog", "my brother Cosmo" ->
"my brother", a car's nickname), abbreviations beside their long forms ("NYC" / "New York
City", "UCL" / "University College London"), facts about a third person told by a speaker,
answers given in a reply to a question, relative dates ("last Tuesday", "a fortnight ago")
resolved by the session's date, dates written as "Sat 14/9" or "the 14th", one speaker who
texts in lower case, and questions that name a person by relation ("Wren's brother") or the
text by name, or the other way round. Most turns are small talk; some name a cast member with
no fact, a few are the same topics about people outside the cast.

Questions: 1 multi-hop (two sessions joined by one entity, or a list over sessions), 2 temporal,
3 open-domain (a hobby), 4 single-hop, 5 adversarial (the fact asked of a person never said to
have it; evidence = the turn with the fact). Pure Python, no network, deterministic for a seed.

    python benchmarks/synthetic_households.py [--conversations 6] [--seed 5] [--out FILE]
    linkmem eval locomo --data FILE --k 10,25 --folds

The stories, value lists and small talk are in ``households_data.py``.
"""

from __future__ import annotations

import argparse
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from households_data import (
    ANSWER,
    CHOICES,
    DECOYS,
    DOINGS,
    HOBBIES,
    MENTIONS,
    NAMES,
    PETS,
    REPLY,
    SMALL,
    SMALL_TAIL,
    SMALL_WHEN,
    STORIES,
    THIRD,
    WHEN,
    Story,
)
from synthetic_conversations import write_set

SESSIONS = 12
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "synthetic-households.json"
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


@dataclass(eq=False)
class Line:
    role: str
    text: str
    dia_id: str = ""


@dataclass
class World:
    rng: random.Random
    rel: str
    cast: dict[str, str]
    dates: list[datetime]
    episodes: list[list[list[Line]]] = field(default_factory=lambda: [[] for _ in range(SESSIONS)])
    qas: list[dict] = field(default_factory=list)

    def fill(self, text: str, slots: dict[str, str]) -> str:
        return string.Formatter().vformat(self.rng.choice(text.split(" | ")), (), slots)

    def when(self, session: int) -> tuple[str, str]:
        """A relative time said in ``session`` and the day it means."""
        d = self.dates[session]
        phrase, back = self.rng.choice(WHEN)
        if back == "weekday":
            back = self.rng.randint(1, 6)
            phrase = phrase.format(wd=WEEKDAYS[(d - timedelta(days=back)).weekday()])
        elif back == "weekend":
            back = (d.weekday() - 5) % 7 or 7
        return phrase, f"{(d - timedelta(days=back)):%A %-d %B %Y}"

    def later_day(self, session: int) -> tuple[str, str]:
        """A day 5-20 days after ``session`` written as "Sat 14/9", "the 14th" or "14 September"."""
        d = self.dates[session] + timedelta(days=self.rng.randint(5, 20))
        style = self.rng.randrange(3)
        said = [f"{d:%a} {d.day}/{d.month}", f"the {ordinal(d.day)}", f"{d.day} {d:%B}"][style]
        return said, f"{d:%-d %B %Y}"

    def play(self, name: str, story: Story, sessions: Sequence[int]) -> None:
        teller = self.rng.choice(story.teller)
        listener = "B" if teller == "A" else "A"
        slots = dict(self.cast) | {"T": self.cast[teller], "L": self.cast[listener]}
        slots["T_poss"] = "their"
        if name in ("pet", "sibling", "colleague"):  # whose they are, for small talk
            self.cast[f"{name[:3]}_owner"] = teller
        for key, options in CHOICES.items():
            value = self.rng.choice(options)
            if isinstance(value, tuple):
                slots[f"{key}_abbr"], slots[f"{key}_long"] = value
                slots[f"{key}_make"] = value[0]
            else:
                slots[key] = value
        slots["car"] = slots["car_long"]
        slots["trip_month"] = f"{self.dates[sessions[0]] + timedelta(days=40):%B}"
        slots["days"] = str(self.rng.randint(4, 12))
        for i, session in enumerate(sessions):
            slots[f"when{i}"], slots[f"date{i}"] = self.when(session)
        slots["race_day"], slots["race_date"] = self.later_day(sessions[0])
        slots["gig_day"], _ = self.later_day(sessions[0])
        parts: list[list[Line]] = []
        for session, part in zip(sessions, story.parts):
            lines = []
            for turn in part:
                said = self.fill(turn, slots).removeprefix("T: ").removeprefix("L: ")
                lines.append(Line(teller if turn[0] == "T" else listener, said))
            self.episodes[session].append(lines)
            parts.append(lines)
        for category, evidence, question in story.questions:
            lines = [parts[p][t] for p, t in evidence]
            text = self.fill(question, slots)
            self.qas.append(
                {"question": text, "category": category, "evidence": lines, "story": name}
            )

    def hobby(self, role: str, name: str) -> None:
        turns, questions = HOBBIES[name]
        slots = {"X": self.cast[role], "X_poss": "their"}
        lines = []
        for session, text in zip(sorted(self.rng.sample(range(1, SESSIONS), 3)), turns):
            line = Line(role, text)
            self.episodes[session].append([line, Line("B" if role == "A" else "A", "Nice!")])
            lines.append(line)
        for question in questions:
            self.qas.append({"question": self.fill(question, slots), "category": 3,
                             "evidence": lines, "story": f"hobby {name}"})  # fmt: skip


def make_cast(rng: random.Random, rel: str) -> dict[str, str]:
    if rel == "F":
        a, b = rng.sample(NAMES["F"].split(), 2)
    else:
        a, b = rng.choice(NAMES[rel].split()), rng.choice(NAMES["F"].split())
    sib, col, nan, cousin, physio, landlord = rng.sample(THIRD, 6)
    pet = rng.choice(PETS)
    cast = {"A": a, "B": b, "sib": sib, "col": col, "nan": nan, "cousin": cousin,
            "physio": physio, "landlord": landlord, "pet": pet}  # fmt: skip
    cast["sib_rel"] = rng.choice(["brother", "sister"])
    for key in ("pet", "col", "physio"):
        words = ("she", "She", "her", "her") if rng.random() < 0.5 else ("he", "He", "him", "his")
        cast |= {f"{key}_{w}": v for w, v in zip(("she", "She", "obj", "pos"), words)}
    return cast


def session_dates(rng: random.Random) -> list[datetime]:
    d = datetime(2023, 2, 1) + timedelta(days=rng.randrange(600))
    out = []
    for _ in range(SESSIONS):
        d += timedelta(days=rng.choice([3, 5, 6, 9, 12, 16, 23, 40]))
        out.append(d.replace(hour=rng.randint(7, 22), minute=rng.randrange(60)))
    return out


def filler(w: World) -> list[Line]:
    """Small talk: mostly chatter, some naming a cast member with no fact, a few decoys."""
    role = w.rng.choice("AB")
    draw = w.rng.random()
    mentions = [m for m in MENTIONS if f"{m[1]}_owner" in w.cast]
    if draw < 0.22 and mentions:
        whose, key, text = w.rng.choice(mentions)
        owner = w.cast[f"{key}_owner"]
        role = owner if whose == "own" else "B" if owner == "A" else "A"
        text = w.fill(text, w.cast)
    elif draw < 0.32:
        text = w.rng.choice(DECOYS)
    elif draw < 0.6 and w.rel != "F":  # the parent's or the coach's own small talk
        role, text = "A", w.rng.choice(SMALL[w.rel].split("|"))
    elif draw < 0.75:
        what, when, tail = (w.rng.choice(x) for x in (DOINGS, SMALL_WHEN, SMALL_TAIL))
        text = f"{what} {when}".strip() + tail + "."
    else:
        text = w.rng.choice((SMALL[""] + ("|" + SMALL["F"]) * (w.rel == "F")).split("|"))
    reply = w.rng.choice(ANSWER if text.endswith("?") else REPLY)
    return [Line(role, text), Line("B" if role == "A" else "A", reply)]


def styled(w: World, line: Line) -> str:
    """Flatmate B texts in lower case without full stops; a parent sometimes signs off."""
    text = line.text
    if w.rel == "F" and line.role == "B" and w.rng.random() < 0.7:
        if text.split()[0].strip(",.!?'s") not in w.cast.values():
            text = text[0].lower() + text[1:]
        text = text.rstrip(".")
    if w.rel == "P" and line.role == "A" and w.rng.random() < 0.08:
        text += f" Love, {w.cast['parent_word']} x"
    return text


def conversation(index: int, seed: int, turns: int) -> dict:
    rng = random.Random(f"households-{seed}-{index}")
    rel = "FPC"[index % 3]
    w = World(rng, rel, make_cast(rng, rel), session_dates(rng))
    w.cast["parent_word"] = rng.choice(["Mum", "Dad"])
    for name, story in STORIES.items():
        if rel in story.rels:
            sessions = sorted(rng.sample(range(SESSIONS), len(story.parts)))
            w.play(name, story, sessions)
    for role, hobby in zip("AB", rng.sample(sorted(HOBBIES), 2)):
        w.hobby(role, hobby)
    conv: dict = {"speaker_a": w.cast["A"], "speaker_b": w.cast["B"]}
    for s in range(SESSIONS):
        blocks = [list(e) for e in w.episodes[s]]
        used = sum(len(b) for b in blocks) + 4
        while used < turns // SESSIONS:
            blocks.insert(rng.randrange(len(blocks) + 1), filler(w))
            used += 2
        who = rng.choice("AB")
        other = "B" if who == "A" else "A"
        call = w.cast["parent_word"] if rel == "P" and other == "A" else w.cast[other]
        lines = [Line(who, rng.choice(["Hi {}!", "Hey {}, got a sec?", "Evening {}."]).format(
            call)), Line(other, rng.choice(["Hey!", "Hiya, go on.", "Yes?"]))]  # fmt: skip
        lines += [line for block in blocks for line in block]
        lines += [Line(who, rng.choice(["Right, must go.", "Talk later x", "Off to bed."])),
                  Line(other, rng.choice(["Bye!", "Night!", "Laters."]))]  # fmt: skip
        for j, line in enumerate(lines, 1):
            line.dia_id = f"D{s + 1}:{j}"
        conv[f"session_{s + 1}_date_time"] = f"{w.dates[s]:%Y-%m-%d %H:%M}"
        conv[f"session_{s + 1}"] = [
            {"speaker": w.cast[ln.role], "dia_id": ln.dia_id, "text": styled(w, ln)} for ln in lines
        ]
    qa = []
    for item in w.qas:
        evidence = [line.dia_id for line in item["evidence"]]
        assert all(evidence), item["question"]
        qa.append({"question": item["question"], "answer": "", "evidence": evidence,
                   "category": item["category"], "story": item["story"]})  # fmt: skip
    relation = {"F": "flatmates", "P": "parent and adult child", "C": "coach and athlete"}[rel]
    return {"sample_id": f"house-{index + 1}", "relationship": relation, "conversation": conv,
            "qa": qa}  # fmt: skip


def generate(seed: int, conversations: int = 6, turns: int = 300) -> list[dict]:
    return [conversation(i, seed, turns) for i in range(conversations)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--conversations", type=int, default=6)
    parser.add_argument("--turns", type=int, default=300, help="turns per conversation (about)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    data = generate(args.seed, args.conversations, args.turns)
    write_set(data, args.out)


if __name__ == "__main__":
    main()
