"""Seeded synthetic conversations in the LoCoMo JSON format: a generalisation check.

Retrieval constants were tuned on the LoCoMo dev split; this writes an independent set. Two
speakers chat over 10 dated sessions about a cast of entities (a pet, a colleague whose name
contains the pet's, a sister, a friend, cities and a "Little <city>" restaurant, a café, a
product, a project, code identifiers, quoted titles), each with facts in several sessions,
stated in varied ways (pronoun follow-ups, replies naming the entity only) among small talk.
Questions are paraphrased away from the evidence. Categories as in LoCoMo: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (never said; evidence = the related
turn). Pure Python, no network, deterministic for a seed.

    python benchmarks/synthetic_conversations.py [--conversations 4] [--turns 300] [--seed 7]

Scripts: ``A:``/``B:`` turns (``X:`` a speaker chosen at play time), several per line split by
`` // ``, alternatives by `` | ``; ``P:`` a photo caption for the turn above; ``--- `` starts the
next part (played in a later session); ``Q<category> <turn numbers>: question | paraphrase =
answer``. ``{slots}``: the cast, ``CHOICES`` (a numeric suffix picks distinct values),
``{when<i>}``/``{date<i>}`` (a relative time said in part i and the date it means).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

SESSIONS = 10
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "synthetic-conversations.json"

SCRIPTS_TEXT = """
[adopt]
A: Big news: I adopted a {species} from the shelter {when0}. Meet {pet}!
P: a photo of a {breed} curled up on a sofa
B: No way, congratulations! What kind? | Aww! What breed?
A: {pet_He}'s a {breed}, two years old and chews everything.
Q2 1: When did {A} bring {pet} home? | On what date did {A} get {pet}? = {date0}
Q4 3: What breed is {pet}? | Which breed of {species} did {A} adopt? = {breed}
Q5 3: What breed is {B}'s {species}? = {breed}
[trips]
A: We took {pet} to {trip0} {when0}, {pet_his} first long train ride.
B: Did {pet_he} behave? | Aww, how was {pet_he}? // A: {act0}
--- A: Back from {trip1}! We went {when1} and brought {pet}. | {pet} came along to {trip1} {when1}!
B: How did {pet_he} cope with the journey? // A: {act1}
--- A: {pet} is officially well travelled: {trip2} {when2}! // B: Did {pet_he} like it?
A: {act2}
Q4 3: What did {pet} get up to in {trip0}? | How did {pet} spend the {trip0} trip? = {act0}
Q4 6: What did {pet} do while in {trip1}? = {act1}
Q2 1: When did {A} travel to {trip0} with {pet}? = {date0}
Q2 4: When was {pet}'s trip to {trip1}? = {date1}
Q1 1,4,7: Which cities has {pet} visited? | Where has {A} travelled with {pet}?
= {trip0}, {trip1}, {trip2}
[trick]
A: Guess who finally learned to {trick}? {pet}! // B: Clever {species}! How long did it take?
A: Three weeks and a mountain of cheese.
Q4 1: What new trick has {pet} mastered? = {trick}
Q5 1: What trick did {col} learn? = {trick}
[vet]
A: Rough week: {pet} swallowed {thing} and we ended up at the emergency vet.
B: Oh no! Is {pet_he} okay? // A: {pet_He}'s fine now. Dr. {vet} was brilliant.
Q4 1: What did {pet} eat that {pet_he} shouldn't have? = {thing}
Q4 3: Who treated {pet} at the animal hospital? | Which doctor looked after {pet}? = Dr. {vet}
[food]
A: {pet} has gone off {pet_his} kibble, {pet_he} only eats {food} now.
B: Spoiled! Who taught {pet_him} that? // A: My neighbour {neighbour} hands {pet_him} treats.
Q4 1: What does {pet} insist on eating? = {food}
Q4 3: Who has been feeding {pet} from next door? = {neighbour}
Q5 3: Who keeps giving {col} snacks over the fence? = {neighbour}
[col_project]
A: {col} moved onto {proj} with me, {col_he}'s taking the backend. // B: Is that good news?
A: Very. {col_He} actually reads the design docs.
Q4 1: Which project did {col} join? | What is {col} working on with {A}? = {proj}
Q4 3: What does {A} appreciate about {col} as a teammate? = reads the design docs
[hackathon]
A: {col} won the hackathon with a bot that writes release notes. // B: Ha! Was there a prize?
A: A very ugly trophy and two days off.
Q4 1: What did {col} build for the hackathon? = a bot that writes release notes
Q4 3: What did {col} get for winning? = an ugly trophy and two days off
[lunch]
A: Had lunch with {col} at Little {trip0}, the tapas place. // B: Ooh, any good?
A: The patatas bravas alone are worth it.
Q4 1: Which restaurant did {A} go to with {col}? = Little {trip0}
Q4 3: What dish should you order at Little {trip0}? = the patatas bravas
[baking]
A: {col} brought homemade {bake} to the office again. // B: I need coworkers like that.
A: {col_He} swears the secret is {secret}.
Q4 1: What treats does {col} share with coworkers? = {bake}
Q4 3: According to {col}, what makes the baking so good? = {secret}
[leave]
A: {col} started {leave} {when0}, so I'm covering {col_his} reviews.
B: That's a lot on your plate.
Q2 1: When did {col}'s time off begin? = {date0}
Q5 1: When did {pet} go on {leave}? = {date0}
[sis_job]
B: My sister {sis} started at {company} {when0}. // A: Oh wow! Doing what?
B: She's a {job} there and already loves it.
Q2 1: When did {sis} begin working for {company}? | When was {sis}'s first day at {company}?
= {date0}
Q4 3: What is {sis}'s role at {company}? | What position did {B}'s sister take? = {job}
Q5 1: When did {A}'s sister start at {company}? = {date0}
[books]
B: {sis} lent me {book0}, I'm completely hooked. // A: What's it about? // B: {plot}
--- B: {sis} keeps pushing {book1} on me, so that's next. // A: Your sister has good taste.
--- B: Finished {book0} last night. // A: And? Worth it? // B: {verdict}
Q4 1: Who gave {B} a copy of {book0}? = {sis}
Q4 3: What is the story of {book0}? = {plot}
Q1 1,4: Which novels has {sis} recommended to {B}? = {book0}, {book1}
Q1 1,8: What did {B} make of the novel borrowed from {B}'s sister? = {verdict}
Q5 8: What did {col} think of {book0}? = {verdict}
[sis_move]
B: {sis} is moving to {sis_city} in the spring. // A: That's far! Why?
B: Her partner got a teaching post there.
Q4 1: Which city is {sis} relocating to? = {sis_city}
Q4 3: Why is {sis} leaving town? = her partner's teaching post
[wedding]
A: {friend}'s wedding was {when0}, in a barn outside {wed_city}. // B: How was it?
A: {friend_He} cried through the vows.
Q2 1: When did {friend} get married? = {date0}
Q4 1: Where did {friend} tie the knot? = a barn outside {wed_city}
Q4 3: How did {friend} react during the ceremony? = cried through the vows
[race]
A: {friend} ran the {race} in {time}! // B: Was {friend_he} happy?
A: Not really, {friend_he} wanted a personal best.
Q4 1: What was {friend}'s finishing time in the {race}? = {time}
Q5 1: What was {col}'s time in the {race}? = {time}
[product]
B: I finally bought the {product} {when0}. // A: The {kind}? How is it? // B: {praise}
--- B: {problem0} // A: Ugh, sorry.
--- B: {problem1} // A: That thing is cursed.
Q2 1: When did {B} purchase the {product}? = {date0}
Q4 3: What does {B} like about the new {kind}? = {praise}
Q1 4,6: What trouble has {B} had with the {product}? = {problem0} / {problem1}
Q5 4: What problems has {A} had with the {product}? = {problem0}
[work]
A: {proj} finally went out to customers {when0}! // B: Cheers to that!
--- A: Lost an afternoon to {config}: someone indented it with tabs. // B: Classic.
--- A: Turns out {func} returned None for refunds, so the totals were off.
B: Oof, glad you caught it.
Q2 1: When was {proj} launched? | When did {proj} go live? = {date0}
Q4 3: What was wrong with {config}? = indented with tabs
Q4 5: Why were the refund totals incorrect? = {func} returned None
Q1 3,5: Which bugs has {A} tracked down at work? = tabs in {config}; {func} returning None
[cafe]
B: Working from {cafe} again, their {drink} is unbeatable. // A: You basically live there.
--- B: Disaster: {cafe} has closed for renovations. // A: Where will you work now?
B: The library. Too quiet.
--- B: {cafe} reopened {when2} with a new roaster! // A: Your second office is back.
Q4 1: What is {B}'s usual drink at {cafe}? = {drink}
Q4 5: Where did {B} work while {cafe} was shut? = the library
Q2 6: When did {cafe} open its doors again? = {date2}
Q1 3,6: What happened to {cafe} over the months? = closed for renovations, then reopened
[films]
B: We watched {film0} on Friday. // A: Any good? // B: {film_verdict}
--- A: {col} dragged me to {film1} at the cinema. // B: And? // A: Better than expected.
Q4 3: What was {B}'s opinion of {film0}? = {film_verdict}
Q5 3: What did {A} think of {film0}? = {film_verdict}
Q4 4: Who did {A} see {film1} with? = {col}
Q1 1,4: Which films have {A} and {B} seen? = {film0}, {film1}
[hobby hiking]
X: Did the ridge loop above the reservoir on Sunday, my calves are toast.
--- X: Booked a mountain hut for a three-day trek in August.
--- X: My new boots are finally broken in after forty kilometres of trail.
Q3 1,2,3: Would {X} enjoy a walking holiday in the Alps? = Likely yes
Q3 1,2,3: Is {X} likely to own trekking poles? = Likely yes
[hobby baking]
X: My sourdough finally got a proper open crumb.
--- X: Spent Sunday laminating dough for croissants, never again.
--- X: Came second in the village show with a rye loaf!
Q3 1,2,3: Would {X} appreciate a Dutch oven as a present? = Likely yes
Q3 1,2,3: Does {X} probably spend weekends in the kitchen? = Likely yes
[hobby birds]
X: Spotted a kingfisher by the canal at dawn!
--- X: Got new binoculars, 10x42, and they are so sharp.
--- X: Counted forty-one herons at the estuary this morning.
Q3 1,2,3: Would {X} enjoy a trip to a wetland nature reserve? = Likely yes
Q3 1,2,3: Is {X} an early riser at weekends? = Likely yes
[hobby climbing]
X: Finally sent the purple V4 at the bouldering wall.
--- X: My fingertips are wrecked from all the crimps.
--- X: Signed up for an outdoor course on limestone crags.
Q3 1,2,3: Would {X} be up for a day at a rock gym? = Likely yes
Q3 1,2,3: Does {X} likely have strong hands and forearms? = Likely yes
"""

CHOICES: dict[str, list[str]] = {
    "act": ["{pet_He} chased pigeons all over the old town.",
            "{pet_He} made friends with every waiter on the seafront.",
            "{pet_He} refused to leave the beach, we had to carry {pet_him} back.",
            "{pet_He} slept through the whole boat tour."],
    "trick": ["roll over", "give a high five", "ring the bell by the door"],
    "thing": ["a sock", "a rubber duck", "a hair tie"],
    "vet": ["Chen", "Okafor", "Lindqvist", "Moreau"],
    "food": ["plain chicken", "cheddar cubes", "scrambled egg"],
    "neighbour": ["Mrs. Alvarez", "Gunnar", "old Mr. Webb"],
    "bake": ["cinnamon buns", "lemon bars", "banana bread"],
    "secret": ["brown butter", "cardamom", "a pinch of sea salt"],
    "leave": ["parental leave", "a sabbatical"],
    "plot": ["A lighthouse keeper finds her grandmother's letters hidden in the walls.",
             "Two rival cartographers get stranded on an island that isn't on any map.",
             "A retired chess champion coaches a teenager from a prison library."],
    "verdict": ["Loved it. The last chapter made me cry on the bus.",
                "Honestly a slog in the middle, but the ending saved it.",
                "Five stars, I already want to reread it."],
    "race": ["Berlin Marathon", "Great North Run", "Chicago Marathon"],
    "time": ["3:41", "1:52", "4:05"],
    "praise": ["Brilliant, the battery lasts all week.", "Love it, setup took two minutes."],
    "problem": ["The {product} stopped charging overnight, right before a long day.",
                "The {product} won't pair with my phone anymore, I had to reset it twice.",
                "Support is replacing the faulty charger for my {product}."],
    "drink": ["cortado", "oat flat white", "chai with extra ginger"],
    "film_verdict": ["The soundtrack was incredible but the plot dragged.",
                     "Gorgeous to look at, and I guessed the twist in ten minutes.",
                     "Fell asleep halfway. Not my thing at all."],
}  # fmt: skip
SPEAKERS = "Alice Bob Carmen Dmitri Elena Farid Grace Hugo Ines Jonas Keiko Liam Mira Pablo"
#: (pet, its pronoun, a colleague whose name contains the pet's, the colleague's pronoun)
PET_PAIRS = [("Max", "he", "Maxine", "she"), ("Bella", "she", "Isabella", "she"),
             ("Leo", "he", "Leonie", "she"), ("Teddy", "he", "Theodore", "he"),
             ("Benji", "he", "Benjamin", "he"), ("Rosie", "she", "Rosalind", "she")]  # fmt: skip
BREEDS = {"dog": ["beagle", "border collie", "dachshund", "whippet", "golden retriever"],
          "cat": ["Maine Coon", "ginger tabby", "Siamese", "ragdoll"]}  # fmt: skip
FRIENDS = [("Tomasz", "he"), ("Dev", "he"), ("Yara", "she"), ("Felix", "he"), ("Ama", "she")]
CAST_CHOICES = {
    "sis": ["Nora", "Priya", "Greta", "Sofia", "Hana", "Ruth"],
    "company": ["Acme Analytics", "Brightwell", "Corvid Labs", "Tessellate", "Halcyon Bank"],
    "job": ["data engineer", "product designer", "UX researcher", "site reliability engineer"],
    "proj": ["Project Falcon", "Project Heron", "Atlas", "Juniper"],
    "config": ["config.yaml", "deploy.sh", "settings.toml", "docker-compose.yml"],
    "func": ["parse_invoice()", "sync_ledger()", "apply_discount()", "normalize_vat()"],
    "cafe": ["Blue Door Café", "Copper Kettle", "Lantern Coffee", "Moth & Moon"],
}
CITIES = ["Lisbon", "Kyoto", "Edinburgh", "Valencia", "Porto", "Bruges", "Oslo", "Krakow"]
PRODUCTS = [("Kestrel", "e-bike"), ("Nimbus 3", "headphones"), ("Orbit S", "smartwatch")]
BOOKS = ["The Quiet Orchard", "Salt and Ember", "A Map of Small Hours", "Winter at Hollow Point"]
FILMS = ["Northern Static", "The Last Ferry", "Paper Moons", "Velvet Engine"]
TOPICS = """The rain hasn't stopped since Monday.|I'm trying to cut down on coffee, it's not going
well.|The neighbours are renovating again, drills at eight in the morning.|Traffic this morning
was unreal.|I've been sleeping terribly this week.|Made a huge pot of lentil soup, lunch is
sorted until Friday.|My phone screen has a new crack, naturally.|The heating is making that
clanking noise again.|I rearranged the living room and now I can't find anything.|I tried that
new ramen place, the broth was amazing.|Our team meeting ran an hour over again.|I stayed up
until two watching documentaries.|I got a parking ticket, I was gone five minutes.|The power went
out for an hour last night.|My back is sore from that awful office chair.|The sunset yesterday
was ridiculous, all pink and orange.|My inbox is at four hundred unread.""".replace("\n", " ")
#: Hard negatives: the same topics as the facts, about people and pets outside the cast.
DECOYS = """My cousin's dog Biscuit swallowed a battery once, the vet bill was huge.|Biscuit, my
cousin's dog, learned to roll over in a day.|My cousin took Biscuit to Seville, he hated the
heat.|Ravi from accounting brought brownies, they were a bit dry.|Ravi goes on leave next month
too.|My brother Marco started at a startup in Munich as a designer.|Joanna lent me a thriller
last year and I never gave it back.|Joanna ran a half marathon in 2:10 and was thrilled.|We
watched a documentary about octopuses, so good.|My old headphones stopped charging too, I gave
up on them.|Marco's wedding was in a castle, very fancy.|Ravi's deploy script broke last week,
same kind of mess.|There's a café near Marco's that does great cortados.|Joanna is moving to
Dublin for work.|My neighbour's cat sleeps on our car roof every morning.""".replace("\n", " ")
REPLIES = """Ha, that sounds about right.|Oh no, that's the worst.|Honestly, same.|That sounds
lovely.|Classic.|I feel that.|Oof. Hang in there.|Haha, of course.|Nice! Good for you.|That's so
annoying.|Wait, really?|Fair enough!|Love that.|Ugh, I know the feeling.|Keep me posted.""".replace(
    "\n", " "
).split("|")
PREFIXES = ["", "", "", "Update: ", "Random thought: ", "Ugh. ", "Small news: "]
#: Small talk that names an entity but states no fact about it, then session openers/closers.
DISTRACTORS = """A: {pet} says hi, by the way.|A: {pet} is snoring next to me.|B: Give {pet} a
scratch from me!|B: Say hi to {col} for me.|A: {col} and I have a planning day.|A: How's {sis}
doing these days?|B: {sis} says hello!|B: Is {proj} still eating your evenings?|B: Have you heard
from {friend} lately?|A: Still happy with the {product}?|A: Haven't been to {cafe} in ages.|A:
Remind me never to open {config} on a Friday.|A: I walked past Little {trip0} again today.|B:
{company} is hiring again, apparently.""".replace("\n", " ").split("|")
OPENERS = ["Hey {other}! How have you been? // Hi! Good, busy. You?",
           "Long time no chat, {other}! What's new? // So much, where do I start?",
           "Morning! Got a minute? // Always. What's up?"]  # fmt: skip
CLOSERS = ["Anyway, I have to run. Talk soon! // Bye! Speak soon.",
           "I should sleep. Catch up next week? // Definitely, good night!"]  # fmt: skip
PRONOUN_KEYS = ("he", "He", "him", "his")
PRONOUNS = {"he": ("he", "He", "him", "his"), "she": ("she", "She", "her", "her")}
WHEN = ["yesterday", "two days ago", "last Saturday", "last week"]
_SLOT = re.compile(r"\{(\w+?)(\d*)\}")


@dataclass
class Script:
    parts: list[list[tuple[str, str, str]]]  # per part: (role, text, caption)
    questions: list[tuple[int, list[int], str, str]]  # (category, turn numbers, text, answer)
    text: str = ""


def parse_scripts(text: str) -> dict[str, Script]:
    scripts: dict[str, Script] = {}
    script = Script([], [])
    for line in text.strip().replace("\n= ", " = ").splitlines():
        if line.startswith("["):
            script = scripts[line[1:-1]] = Script([[]], [])
            continue
        script.text += line + "\n"
        if line.startswith("P: "):
            role, turn, _ = script.parts[-1][-1]
            script.parts[-1][-1] = (role, turn, line[3:])
        elif line.startswith("Q"):
            head, rest = line[1:].split(": ", 1)
            category, turns = head.split()
            question, answer = rest.rsplit(" = ", 1)
            evidence = [int(t) for t in turns.split(",")]
            script.questions.append((int(category), evidence, question, answer))
        else:
            if line.startswith("--- "):
                script.parts.append([])
                line = line[4:]
            script.parts[-1] += [(turn[0], turn[3:], "") for turn in line.split(" // ")]
    return scripts


SCRIPTS = parse_scripts(SCRIPTS_TEXT)


@dataclass(eq=False)
class Line:
    role: str  # "A" or "B"
    text: str
    caption: str = ""
    dia_id: str = ""


@dataclass
class QA:
    question: str
    answer: str
    category: int
    evidence: list[Line]


def day(d: datetime) -> str:
    return f"{d.day} {d:%B}, {d.year}"


@dataclass
class World:
    """One conversation being built: the cast, session dates, episodes and questions."""

    rng: random.Random
    cast: dict[str, str]
    dates: list[datetime]
    episodes: list[list[list[Line]]] = field(default_factory=lambda: [[] for _ in range(SESSIONS)])
    qas: list[QA] = field(default_factory=list)

    def fill(self, text: str, slots: dict[str, str] | None = None) -> str:
        """Pick one of the `` | `` alternatives and fill its slots."""
        return self.rng.choice(text.split(" | ")).format(**self.cast, **(slots or {}))

    def when(self, session: int) -> tuple[str, str]:
        """A relative time phrase said in a session and the date it means."""
        phrase, d = self.rng.choice(WHEN), self.dates[session]
        if phrase == "last week":
            return phrase, f"the week before {day(d)}"
        back = {"yesterday": 1, "two days ago": 2}.get(phrase) or (d.weekday() - 5) % 7 or 7
        return phrase, day(d - timedelta(days=back))

    def slots(self, script: Script, sessions: Sequence[int]) -> dict[str, str]:
        slots: dict[str, str] = {}
        for i, session in enumerate(sessions):
            slots[f"when{i}"], slots[f"date{i}"] = self.when(session)
        used = sorted({m.groups() for m in _SLOT.finditer(script.text)})
        for base in sorted({b for b, _ in used if b in CHOICES}):
            names = [base + n for b, n in used if b == base]
            for name, value in zip(names, self.rng.sample(CHOICES[base], len(names))):
                slots[name] = self.fill(value)
        return slots

    def play(self, name: str, sessions: Sequence[int], role: str = "A") -> None:
        """Place the script's parts in ``sessions`` (one each) and ask its questions."""
        script = SCRIPTS[name]
        slots = self.slots(script, sessions) | {"X": self.cast[role]}
        swap = {"X": role, "Y": "B" if role == "A" else "A", "A": "A", "B": "B"}
        lines: list[Line] = []
        for session, part in zip(sessions, script.parts):
            episode = [Line(swap[r], self.fill(t, slots), self.fill(c, slots)) for r, t, c in part]
            self.episodes[session].append(episode)
            lines += episode
        for category, turns, question, answer in script.questions:
            evidence = [lines[t - 1] for t in turns]
            self.qas.append(QA(self.fill(question, slots), self.fill(answer, slots), category,
                               evidence))  # fmt: skip

    def sessions(self, n: int) -> list[int]:
        """``n`` distinct sessions after the first, in order."""
        return sorted(self.rng.sample(range(1, SESSIONS), n))


def make_cast(rng: random.Random) -> dict[str, str]:
    a, b = rng.sample(SPEAKERS.split(), 2)
    pet, pet_pronoun, col, col_pronoun = rng.choice(PET_PAIRS)
    friend, friend_pronoun = rng.choice(FRIENDS)
    species = rng.choice(sorted(BREEDS))
    cities = rng.sample(CITIES, 5)
    product, kind = rng.choice(PRODUCTS)
    cast = {"A": a, "B": b, "pet": pet, "species": species, "breed": rng.choice(BREEDS[species]),
            "col": col, "friend": friend, "kind": kind, "product": f"{product} {kind}",
            "sis_city": cities[3], "wed_city": cities[4]}  # fmt: skip
    cast |= {name: rng.choice(options) for name, options in CAST_CHOICES.items()}
    cast |= {f"trip{i}": city for i, city in enumerate(cities[:3])}
    cast |= {f"book{i}": f'"{title}"' for i, title in enumerate(rng.sample(BOOKS, 2))}
    cast |= {f"film{i}": f'"{title}"' for i, title in enumerate(rng.sample(FILMS, 2))}
    for who, pronoun in (("pet", pet_pronoun), ("col", col_pronoun), ("friend", friend_pronoun)):
        cast |= {f"{who}_{key}": word for key, word in zip(PRONOUN_KEYS, PRONOUNS[pronoun])}
    return cast


def plan(w: World) -> None:
    """Every script once (the adoption first), then a hobby for each speaker."""
    w.play("adopt", [0])
    for name, script in SCRIPTS.items():
        if name != "adopt" and not name.startswith("hobby"):
            w.play(name, w.sessions(len(script.parts)))
    hobbies = [name for name in SCRIPTS if name.startswith("hobby")]
    for role, hobby in zip("AB", w.rng.sample(hobbies, 2)):
        w.play(hobby, w.sessions(3), role)


def filler(w: World, session: int) -> list[Line]:
    """Small talk: a statement and a reply; some name an entity without a fact, some are decoys."""
    draw = w.rng.random()
    if session > 0 and draw < 0.3:
        role, text = w.rng.choice(DISTRACTORS).split(": ", 1)
    elif draw < 0.55:
        role, text = w.rng.choice("AB"), w.rng.choice(DECOYS.split("|"))
    else:
        role, text = w.rng.choice("AB"), w.rng.choice(PREFIXES) + w.rng.choice(TOPICS.split("|"))
    other = "B" if role == "A" else "A"
    return [Line(role, w.fill(text)), Line(other, w.rng.choice(REPLIES))]


def layout(w: World, session: int, target: int) -> list[Line]:
    """Opener, the session's episodes at random places among small talk, closer."""
    role = w.rng.choice("AB")
    other = "B" if role == "A" else "A"
    opener = w.fill(w.rng.choice(OPENERS), {"other": w.cast[other]}).split(" // ")
    closer = w.rng.choice(CLOSERS).split(" // ")
    blocks = [list(episode) for episode in w.episodes[session]]
    used = 4 + sum(len(b) for b in blocks)
    while used < target:
        blocks.insert(w.rng.randrange(len(blocks) + 1), filler(w, session))
        used += 2
    lines = [Line(role, opener[0]), Line(other, opener[1])]
    lines += [line for block in blocks for line in block]
    return lines + [Line(role, closer[0]), Line(other, closer[1])]


def session_dates(rng: random.Random) -> list[datetime]:
    d = datetime(2022, 1, 3) + timedelta(days=rng.randrange(500))
    out = []
    for _ in range(SESSIONS):
        d += timedelta(days=rng.randint(4, 25))
        out.append(d.replace(hour=rng.randint(8, 21), minute=rng.choice([0, 15, 30, 45])))
    return out


def stamp(d: datetime) -> str:
    """LoCoMo's session date format: ``2:15 pm on 3 March, 2023``."""
    return f"{d.hour % 12 or 12}:{d.minute:02d} {'am' if d.hour < 12 else 'pm'} on {day(d)}"


def turn_json(w: World, line: Line) -> dict:
    turn = {"speaker": w.cast[line.role], "dia_id": line.dia_id, "text": line.text}
    if line.caption:
        turn |= {"img_url": ["https://example.invalid/photo.jpg"], "blip_caption": line.caption}
    return turn


def qa_json(qa: QA) -> dict:
    evidence = [line.dia_id for line in qa.evidence]
    assert all(evidence), f"evidence not placed for {qa.question!r}"
    key = "adversarial_answer" if qa.category == 5 else "answer"
    return {"question": qa.question, key: qa.answer, "evidence": evidence, "category": qa.category}


def conversation(index: int, seed: int, turns: int) -> dict:
    """One LoCoMo sample; its own RNG, so conversations do not depend on each other."""
    rng = random.Random(f"{seed}-{index}")
    w = World(rng, make_cast(rng), session_dates(rng))
    plan(w)
    conv: dict = {"speaker_a": w.cast["A"], "speaker_b": w.cast["B"]}
    for s in range(SESSIONS):
        lines = layout(w, s, turns // SESSIONS)
        for j, line in enumerate(lines, 1):
            line.dia_id = f"D{s + 1}:{j}"
        conv[f"session_{s + 1}_date_time"] = stamp(w.dates[s])
        conv[f"session_{s + 1}"] = [turn_json(w, line) for line in lines]
    return {"sample_id": f"synth-{index + 1}", "conversation": conv,
            "qa": [qa_json(qa) for qa in w.qas]}  # fmt: skip


def write_set(data: list[dict], out: Path) -> None:
    """Write a LoCoMo-format set and say how big it is."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    n_turns = sum(len(v) for c in data for k, v in c["conversation"].items() if k[-1].isdigit())
    n_qa = sum(len(c["qa"]) for c in data)
    print(f"wrote {out}: {len(data)} conversations, {n_turns} turns, {n_qa} questions")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--turns", type=int, default=300, help="turns per conversation (about)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    data = [conversation(i, args.seed, args.turns) for i in range(args.conversations)]
    write_set(data, args.out)


if __name__ == "__main__":
    main()
