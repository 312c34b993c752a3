"""Seeded long user-assistant chats in the LoCoMo JSON format: long texts and planted facts.

Each conversation is one user talking to an assistant over dated sessions. The user asks for
help (trips, recipes, code, budgets, training plans, gardens); the assistant answers at length
(1-9k characters, a few of 20,000 and 65,000), naming many places, products and people, so the
entity store sees what a long chat gives it. One user turn per fact states something personal
("my sister Ines just moved to Porto"): half of them as an aside before the request, half buried
after a long pasted text (past the first 256 word pieces, where a truncating embedder stops),
or with ``--buried middle`` in the middle of it.
Assistant answers on the same topics name the same cities and people without the fact.
Questions (category 4, single-hop; 1, multi-hop, for two facts of a kind) are paraphrased away
from the fact's words. Pure Python, no network, deterministic for a seed.

    python benchmarks/long_chats.py [--conversations 4] [--sessions 10] [--seed 11] [--buried end]
    linkmem eval locomo --data benchmarks/results/long-chats.json --k 5,10,25
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "long-chats.json"
CITIES = (
    "Porto Lisbon Valencia Lyon Ghent Bologna Kraków Tallinn Bergen Seville Munich Split".split()
)
NAMES = "Ines Tomas Greta Rafael Nadia Oskar Lena Matteo Priya Jonas Elif Bruno".split()
PETS = "Biscuit Pepper Mochi Juniper Waffles Nutmeg Pixel Clover".split()
BRANDS = "Garmin Brompton Miele Fujifilm Kindle Lodge Bosch Patagonia".split()
DISHES = "risotto shakshuka ramen paella goulash dal moussaka pho".split()
TOOLS = "pandas FastAPI Terraform PostgreSQL Redis Kubernetes Django React".split()

#: (statement in a user turn, question, answer); {x} is drawn from the list named in `kind`.
FACTS = [
    (
        "sister",
        NAMES,
        "my sister {x} just moved to {c}",
        "Which city does my sister live in now? | Where is my sister based these days?",
    ),
    (
        "dog",
        PETS,
        "our new puppy is called {x}",
        "What is the name of the puppy we got? | What did we name the young dog?",
    ),
    (
        "allergy",
        DISHES,
        "I get a rash whenever I eat {x}",
        "Which food am I allergic to? | What dish gives me a skin reaction?",
    ),
    (
        "bike",
        BRANDS,
        "I finally bought a {x} for my commute",
        "What did I buy for getting to work? | Which brand did I choose for commuting?",
    ),
    ("boss", NAMES, "my new manager is {x}", "Who do I report to at work? | Who is my boss now?"),
    (
        "stack",
        TOOLS,
        "at work we are migrating everything to {x}",
        "What is my team moving to? | Which technology is our migration target?",
    ),
    (
        "race",
        CITIES,
        "I signed up for the half marathon in {x}",
        "Where is the race I entered? | In which city will I run 21 km?",
    ),
    (
        "anniversary",
        CITIES,
        "we are spending our anniversary in {x}",
        "Where will we celebrate? | Where are we going for our wedding anniversary?",
    ),
    (
        "friend",
        NAMES,
        "my oldest friend {x} is getting married",
        "Whose wedding is coming up? | Which friend is about to get married?",
    ),
    (
        "cat",
        PETS,
        "our cat {x} turned twelve",
        "How is the old cat called? | What is the name of our senior cat?",
    ),
]

REQUESTS = {
    "travel": "Can you plan three days in {c} for me?",
    "cooking": "How do I make a proper {d} for six people?",
    "code": "Why is my {t} service so slow under load?",
    "money": "Can you help me budget for the next few months?",
    "fitness": "Give me a training plan for the next eight weeks.",
    "garden": "What should I plant on a shady balcony?",
}
SENTENCES = {
    "travel": [
        "Start the morning in {c} at the old market, where {n} runs a stall that locals love.",
        "Take the regional train to {c2}; the {b} shop near the station rents bikes by the day.",
        "In the afternoon walk along the river to the cathedral, then the museum of modern art.",
        "Book dinner near the harbour; ask for the {d}, which is the house speciality.",
        "If it rains, the covered galleries of {c} and the tile museum fill an afternoon easily.",
    ],
    "cooking": [
        "For a good {d}, toast the spices first so the oil carries their flavour into the base.",
        "{n} always said that a heavy {b} pan keeps the heat even when you add cold stock.",
        "Season in layers: a little salt at each stage tastes better than a lot at the end.",
        "Let the {d} rest for ten minutes before serving so the texture settles.",
        "A squeeze of lemon and fresh herbs at the end lifts the whole dish.",
    ],
    "code": [
        "Profile first: in {t} most latency hides in N+1 queries, not in the handlers.",
        "Put a connection pool in front of {t2} and size it to the cores, not to the traffic.",
        "Cache the hot reads for a few seconds; {n} on the platform team can review the TTLs.",
        "Batch the writes and move the slow report into a background job with retries.",
        "Add a dashboard with p50, p95 and p99 latency before and after each change.",
    ],
    "money": [
        "List the fixed costs first: rent, insurance, the {b} subscription and transport.",
        "Put ten percent aside on payday, before anything else leaves the account.",
        "Track the variable spending for a month; groceries and eating out move most.",
        "Keep three months of expenses as a buffer before investing the rest.",
        "{n} suggested a shared spreadsheet; a simple one with categories works well.",
    ],
    "fitness": [
        "Run easy three times a week and keep one longer run on the weekend.",
        "Add strength work twice a week: squats, lunges, planks and calf raises.",
        "Your {b} watch can hold the easy runs in heart-rate zone two.",
        "Increase the weekly distance by no more than ten percent, and rest every fourth week.",
        "{n} at the club in {c} runs an interval session on Thursdays you could join.",
    ],
    "garden": [
        "Ferns, hostas and begonias cope well with shade and a little morning sun.",
        "Mint and parsley grow in half shade; keep the mint in its own pot.",
        "Use a light potting mix with compost and water when the top centimetre is dry.",
        "The garden centre in {c} sells self-watering {b} planters that suit balconies.",
        "{n} grows tomatoes on a shady balcony, but the harvest is small and late.",
    ],
}
PASTE = [
    "Here is the draft of the email to the landlord about the heating, can you tighten it?",
    "Below are my meeting notes from today, please turn them into a summary.",
    "This is the cover letter I wrote, is it too long?",
]
PASTE_LINES = [
    "The heating in the flat has not worked properly since the end of October.",
    "We reported it twice by phone and once in writing, and a technician visited once.",
    "The technician said a part had to be ordered, but nobody has come back since then.",
    "The rooms facing north stay below sixteen degrees in the evening.",
    "We would like a date for the repair and a reduction of the rent for these months.",
    "The action items are to update the roadmap, review the hiring plan and fix the budget.",
    "Marketing asked for the launch date to move by two weeks, which nobody agreed to yet.",
    "I have eight years of experience leading small teams through product launches.",
]


def fill(text: str, rng: random.Random) -> str:
    c, c2 = rng.sample(CITIES, 2)
    t, t2 = rng.sample(TOOLS, 2)
    return text.format(
        c=c, c2=c2, n=rng.choice(NAMES), b=rng.choice(BRANDS), d=rng.choice(DISHES), t=t, t2=t2
    )


def answer(topic: str, rng: random.Random) -> str:
    """A long assistant answer: 12-90 filled sentences, now and then 260 (~20k characters)
    or 800 (~65k, a real chat log's longest turns)."""
    draw = rng.random()
    count = 800 if draw < 0.004 else 260 if draw < 0.03 else rng.choice([12, 20, 30, 45, 60, 90])
    return " ".join(fill(rng.choice(SENTENCES[topic]), rng) for _ in range(count))


#: Where a buried fact goes: after the pasted text ("end") or in its middle ("middle", where
#: a reader of the text's head and tail only does not see it).
PLACEMENTS = ("end", "middle")


def fact_turn(
    statement: str, request: str, rng: random.Random, buried: bool, placement: str = "end"
) -> str:
    if not buried:
        return f"Quick bit of context: {statement}. Anyway, {request[0].lower()}{request[1:]}"
    lines = [rng.choice(PASTE_LINES) for _ in range(rng.randint(22, 30))]
    intro = rng.choice(PASTE)
    aside = f"Oh and unrelated, {statement}."
    if placement == "middle":
        half = len(lines) // 2
        return f"{intro}\n\n{' '.join([*lines[:half], aside, *lines[half:]])}"
    return f"{intro}\n\n{' '.join(lines)}\n\n{aside}"


def conversation(index: int, sessions: int, rng: random.Random, placement: str = "end") -> dict:
    facts = rng.sample(FACTS, len(FACTS))
    slots = iter(range(10_000))
    planned: dict[int, tuple] = {}
    per_session = 6
    turn_slots = rng.sample(range(sessions * per_session), len(facts))
    for fact, slot in zip(facts, turn_slots, strict=True):
        planned[slot] = fact
    conv: dict = {"speaker_a": "User", "speaker_b": "Assistant"}
    qa = []
    day = datetime(2024, 1, 8) + timedelta(days=7 * index)
    for session in range(1, sessions + 1):
        turns = []
        for exchange in range(per_session):
            slot = next(slots)
            topic = rng.choice(list(REQUESTS))
            request = fill(REQUESTS[topic], rng)
            dia_id = f"D{session}:{2 * exchange + 1}"
            if slot in planned:
                kind, pool, statement, question = planned[slot]
                value, city = rng.choice(pool), rng.choice(CITIES)
                fact = statement.format(x=value, c=city)
                text = fact_turn(fact, request, rng, slot % 2 == 1, placement)
                answer_text = city if kind == "sister" else value
                qa.extend(
                    {"question": q, "answer": answer_text, "evidence": [dia_id], "category": 4}
                    for q in question.split(" | ")
                )
            else:
                text = request
            turns.append({"speaker": "User", "dia_id": dia_id, "text": text})
            turns.append(
                {
                    "speaker": "Assistant",
                    "dia_id": f"D{session}:{2 * exchange + 2}",
                    "text": answer(topic, rng),
                }
            )
        conv[f"session_{session}"] = turns
        conv[f"session_{session}_date_time"] = (day + timedelta(days=3 * session)).strftime(
            "10:00 am on %d %B, %Y"
        )
    pet_questions = {FACTS[1][3].split(" | ")[0], FACTS[9][3].split(" | ")[0]}
    pets = [q["evidence"][0] for q in qa if q["question"] in pet_questions]
    qa.append(
        {
            "question": "What are the names of our animals?",
            "answer": "",
            "evidence": pets,
            "category": 1,
        }
    )
    return {"sample_id": f"long-{index + 1}", "conversation": conv, "qa": qa}


def generate(
    conversations: int = 4, sessions: int = 10, seed: int = 11, placement: str = "end"
) -> list[dict]:
    rng = random.Random(seed)
    return [conversation(i, sessions, rng, placement) for i in range(conversations)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--buried", choices=PLACEMENTS, default="end", help="buried facts go")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    data = generate(args.conversations, args.sessions, args.seed, args.buried)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    texts = [
        t["text"]
        for c in data
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ]
    print(
        f"wrote {args.out}: {len(texts)} turns, {sum(len(c['qa']) for c in data)} questions, "
        f"longest {max(map(len, texts))} chars, {sum(len(t) > 20_000 for t in texts)} over 20,000"
    )


if __name__ == "__main__":
    main()
