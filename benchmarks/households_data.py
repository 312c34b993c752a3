"""Data of ``synthetic_households.py``: its stories, hobbies, value lists and small talk.

Stories: parts (one per session, in order), each a list of turns ``T:`` (the teller) or ``L:``
(the listener), alternatives split by `` | ``; questions ``(category, [(part, turn)], text)``.
A tuple in ``CHOICES`` is (short form, long form): an abbreviation and what it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Story:
    rels: str  # relationships it fits: F flatmates, P parent/child, C coach/athlete
    teller: str  # who tells it: "A", "B" or "AB" (either, drawn per conversation)
    parts: list[list[str]]
    questions: list[tuple[int, list[tuple[int, int]], str]]


STORIES: dict[str, Story] = {
    "pet": Story(
        "FP",
        "AB",
        [
            [
                "T: {when0} I brought home a {breed} named {pet} from the rescue. | We've got a "
                "dog! "
                "A {breed} called {pet}, picked {pet_obj} up from the rescue {when0}.",
                "L: No way. What's {pet_she} like? | Oh I love that. How's {pet_she} settling in?",
                "T: Shy, hides under the table, but obsessed with {toy}.",
            ],
            [
                "T: The dog has worked out how to open the {opens}. | Update: the dog can now open "
                "the {opens}. We're doomed.",
                "L: Ha! Genius animal.",
            ],
            [
                "T: {pet}, the {breed}, had to go to the vet: {vet_issue}. | Vet trip for the dog, "
                "{vet_issue}.",
                "L: Poor thing, give {pet_obj} a cuddle from me.",
            ],
        ],
        [
            (2, [(0, 0)], "When did {T} adopt {pet}? | When did {pet} arrive at {T}'s home?"),
            (4, [(0, 2)], "What is {pet} obsessed with? | What does {T}'s rescue dog love?"),
            (4, [(1, 0)], "What has {pet} learned to open?"),
            (4, [(2, 0)], "Why did {pet} need the vet?"),
            (1, [(0, 0), (1, 0)], "What has the {breed} from the rescue learned to open?"),
            (5, [(0, 0)], "What breed is {col}'s dog? | When did {L} adopt a {breed}?"),
        ],
    ),
    "sibling": Story(
        "FPC",
        "AB",
        [
            [
                "T: My {sib_rel} {sib} got into {uni_long} {when0}! | Big news, {sib} (my "
                "{sib_rel}) "
                "got a place at {uni_long} {when0}.",
                "L: Amazing! To study what? | Whoa, well done {sib}. What subject?",
                "T: Oh, {subj0}. For now, anyway.",
            ],
            [
                "T: Guess who's already switched from {subj0} to {subj1}. My {sib_rel}. | "
                "{sib} dropped {subj0}, it's {subj1} now.",
                "L: Can't say I'm surprised.",
            ],
            [
                "T: Drove my {sib_rel} up to the {uni_abbr} halls {when2}, the room is tiny. | "
                "Moved {sib} into halls at {uni_abbr} {when2}.",
                "L: Tiny rooms are a rite of passage.",
            ],
        ],
        [
            (
                2,
                [(0, 0)],
                "When did {sib} get into university? | When did {T}'s {sib_rel} get a "
                "university place?",
            ),
            (4, [(0, 2)], "What did {sib} first enrol to study?"),
            (
                4,
                [(1, 0)],
                "What subject did {T}'s {sib_rel} switch to? | What does {sib} study now?",
            ),
            (2, [(2, 0)], "When did {T} help {sib} move into halls?"),
            (1, [(0, 0), (2, 0)], "Which university's halls did {T} drive {sib} to?"),
            (5, [(1, 0)], "What subject did {L}'s {sib_rel} switch to?"),
        ],
    ),
    "trip": Story(
        "FPC",
        "AB",
        [
            [
                "T: Booked it: {days} days in {city_abbr} in {trip_month}! | Flights to "
                "{city_abbr} "
                "are booked, {days} days in {trip_month}.",
                "L: Jealous. What's the plan?",
                "T: {plan}, mostly.",
            ],
            [
                "T: Back from {city_long} {when1}. Best bit: {highlight}. | Home from {city_long}! "
                "Got back {when1}, and {highlight} was the best thing we did.",
                "L: Sounds perfect.",
            ],
        ],
        [
            (4, [(0, 2)], "What did {T} plan to do in {city_long}?"),
            (4, [(1, 0)], "What was the best part of {T}'s {city_abbr} trip?"),
            (2, [(1, 0)], "When did {T} return from {city_abbr}?"),
            (
                1,
                [(0, 0), (1, 0)],
                "How long did {T} spend in {city_long}, and what was the highlight?",
            ),
            (5, [(1, 0)], "What did {L} enjoy most in {city_long}?"),
        ],
    ),
    "colleague": Story(
        "FPC",
        "AB",
        [
            [
                "T: There's a new {col_role} at work, {col}. {col_She} used to be a {prev_job}!",
                "L: From {prev_job} to {col_role}? That's a jump.",
            ],
            [
                "T: {col} invited the whole office to {col_pos} {event} at {venue}. | Everyone "
                "from "
                "work is going to {col}'s {event}, it's at {venue}.",
                "L: Are you going?",
                "T: Obviously, there's free food.",
            ],
            [
                "T: {col} handed in {col_pos} notice {when2}, {col_she}'s off to {company}. | "
                "{when2} {col} quit, {company} poached {col_obj}.",
                "L: Ouch, you'll miss {col_obj}.",
            ],
        ],
        [
            (4, [(0, 0)], "What did {col} do before {col_pos} current job?"),
            (4, [(1, 0)], "Where is {col}'s {event} being held?"),
            (2, [(2, 0)], "When did {col} resign?"),
            (1, [(0, 0), (2, 0)], "Which company hired the former {prev_job} from {T}'s work?"),
            (5, [(0, 0)], "What did {L} work as before? | What was {sib}'s job before?"),
        ],
    ),
    "physio": Story(
        "CF",
        "B",
        [
            [
                "T: Rolled my {body} on the {surface} {when0}. | {when0} I went over on my {body} "
                "on the {surface}.",
                "L: Ice it, and rest until someone's looked at it.",
            ],
            [
                "T: Saw {physio} the physio, {physio_she} says {advice}.",
                "L: Listen to {physio_obj}.",
            ],
            [
                "T: The physio signed me off, back to {back_to}! | Good news, the physio cleared "
                "me "
                "for {back_to}.",
                "L: Brilliant. Ease in though.",
            ],
        ],
        [
            (2, [(0, 0)], "When did {T} hurt {T_poss} {body}? | When did {T} get injured?"),
            (4, [(1, 0)], "What did {physio} recommend?"),
            (4, [(2, 0)], "What did {physio} clear {T} to do? | What was {T} allowed back to?"),
            (1, [(0, 0), (1, 0)], "Which injury has {physio} been treating?"),
            (5, [(1, 0)], "What did {physio} recommend to {L}?"),
        ],
    ),
    "race": Story(
        "CF",
        "B",
        [
            [
                "T: Entered the {race}, it's on {race_day}. | Signed up for the {race} "
                "({race_day})!",
                "L: Good luck! | Good, it fits the plan.",
            ],
            [
                "T: {race} done: {finish}, {place_res}. | Finished the {race} in {finish}! "
                "{place_res}.",
                "L: Proud of you.",
            ],
        ],
        [
            (4, [(1, 0)], "What was {T}'s finishing time in the {race}?"),
            (2, [(0, 0)], "When was the {race}? | On what date did {T} race the {race}?"),
            (4, [(1, 0)], "Where did {T} place in the {race}?"),
            (5, [(1, 0)], "What was {col}'s time in the {race}?"),
        ],
    ),
    "landlord": Story(
        "F",
        "AB",
        [
            [
                "T: {landlord} finally sent someone for the {broken}. | The {broken} is fixed, "
                "{landlord} sent a guy round.",
                "L: Only took {weeks} weeks.",
            ],
            [
                "T: Letter from {landlord}: rent goes up {amount} from {rent_month}.",
                "L: You're kidding. | That's outrageous.",
            ],
        ],
        [
            (4, [(0, 0)], "What did {landlord} get repaired in the flat?"),
            (4, [(1, 0)], "By how much is the landlord raising the rent?"),
            (1, [(0, 0), (1, 0)], "What has {landlord} done lately?"),
            (5, [(1, 0)], "By how much is {col} raising the rent?"),
        ],
    ),
    "car": Story(
        "FP",
        "AB",
        [
            [
                "T: We bought {owner}'s old {car}, {kid} already calls it {nick}. | Meet {nick}: "
                "{owner}'s old {car}, ours now.",
                "L: Ha, that suits it.",
            ],
            ["T: {nick} failed its MOT, {mot}. | MOT fail for {nick}: {mot}.", "L: Typical."],
            ["T: Drove {nick} to {place} {when2}, not a single breakdown.", "L: A miracle."],
        ],
        [
            (4, [(1, 0)], "Why did the {car_make} fail its MOT?"),
            (2, [(2, 0)], "When did {T} drive the {car_make} to {place}?"),
            (1, [(0, 0), (1, 0)], "Whose old car failed its MOT?"),
            (5, [(1, 0)], "Why did {L}'s car fail its MOT?"),
        ],
    ),
    "gran": Story(
        "P",
        "A",
        [
            [
                "T: Your nan had her hip done {when0}. {nan} being {nan}, she's home already and "
                "bossing everyone about.",
                "L: Give Nan my love!",
            ],
            [
                "T: {nan} is walking to {nan_walk} with her frame now. | Nan's up and about, she "
                "made "
                "it to {nan_walk} today with the frame.",
                "L: Go Nan!",
            ],
            [
                "L: Nan phoned, she wants {dish_whose} {dish} recipe again. | L: Nan's asking for "
                "the {dish} recipe.",
                "T: The trick is {trick}, tell her.",
            ],
        ],
        [
            (
                2,
                [(0, 0)],
                "When did {nan} have her hip operation? | When did {L}'s nan have surgery?",
            ),
            (4, [(1, 0)], "How far can {nan} walk now? | How far does {L}'s grandmother get?"),
            (4, [(2, 1)], "What is the trick to the {dish}?"),
            (5, [(1, 0)], "How far can {col} walk with a frame?"),
        ],
    ),
    "baby": Story(
        "FP",
        "AB",
        [
            [
                "T: {cousin} had the baby {when0}! A little {baby_kind} called {baby}.",
                "L: Oh congratulations to them!",
            ],
            ["T: {baby} is {milestone} already, {cousin} sent a video.", "L: They grow so fast."],
        ],
        [
            (2, [(0, 0)], "When was {baby} born?"),
            (4, [(0, 0)], "What did {cousin} name the baby?"),
            (1, [(0, 0), (1, 0)], "What can {cousin}'s baby do now?"),
            (5, [(0, 0)], "What did {sib} call the baby?"),
        ],
    ),
    "band": Story(
        "F",
        "AB",
        [
            [
                "T: {band} has a gig at {gig_venue} on {gig_day}, you're coming.",
                "L: Wouldn't miss it.",
            ],
            ["L: How was the gig? | L: So, the gig?", "T: Packed! We got paid in {pay}."],
        ],
        [
            (4, [(0, 0)], "Where did {band} play? | Which venue was the gig at?"),
            (4, [(1, 1)], "How did {T}'s band get paid?"),
            (5, [(0, 0)], "Where did {L}'s band play?"),
        ],
    ),
    "job": Story(
        "FPC",
        "AB",
        [
            [
                "T: Interview at the {org_long} {when0}. Fingers crossed. | Had the interview at "
                "the {org_long} {when0}.",
                "L: You'll have smashed it.",
            ],
            [
                "T: The {org_abbr} offered me the job! {offer}. | Got the {org_abbr} job, {offer}.",
                "L: Knew it!",
            ],
        ],
        [
            (2, [(0, 0)], "When was {T}'s interview at the {org_abbr}?"),
            (4, [(1, 0)], "What did the {org_long} offer {T}?"),
            (5, [(1, 0)], "What job was {L} offered at the {org_abbr}?"),
        ],
    ),
    "training": Story(
        "C",
        "A",
        [
            ["T: This block is {block0}.", "L: Got it."],
            ["T: From Monday we switch to {block1}.", "L: Ok, sounds hard."],
            ["T: Did you get the session done? | T: How did today go?", "L: {session_pb}"],
        ],
        [
            (4, [(0, 0)], "What did {T} set for {L}'s first training block?"),
            (1, [(0, 0), (1, 0)], "How has {L}'s training changed over the season?"),
            (4, [(2, 1)], "What did {L} achieve in the recent session?"),
        ],
    ),
}
HOBBIES = {
    "pottery": (["Threw my first proper bowl on the wheel.", "Glaze firing tonight, fingers "
                 "crossed nothing cracks in the kiln.", "Signed up for the Thursday clay class "
                 "again."], ["Would {X} enjoy a ceramics museum?", "Does {X} likely have clay "
                 "under {X_poss} nails a lot?"]),
    "chess": (["Won my club game with the Sicilian!", "Did twenty puzzles before breakfast.",
               "Entered a weekend rapid tournament."], ["Would {X} like a book of endgame "
               "studies?", "Is {X} likely to play board games online?"]),
    "swimming": (["Sea was eleven degrees this morning, still went in.", "Bought a tow float "
                  "for open water.", "Did the pier to pier swim at dawn."], ["Would {X} enjoy "
                  "a wild swimming holiday?", "Is {X} likely to tolerate cold water?"]),
    "woodwork": (["Finished the dovetails on the little box.", "Sharpened every chisel I own, "
                  "very zen.", "Made a chopping board out of offcuts of walnut."], ["Would {X} "
                  "want a workbench?", "Does {X} probably own hand tools?"]),
    "choir": (["Choir did the Fauré Requiem, I'm still buzzing.", "Got the alto solo for the "
               "spring concert!", "Two-hour rehearsal, voice is gone."], ["Would {X} enjoy "
               "a concert in a cathedral?", "Does {X} likely read sheet music?"]),
}  # fmt: skip
CHOICES = {
    "breed": ["lurcher", "staffie", "greyhound", "spaniel cross", "border terrier"],
    "toy": ["a squeaky hedgehog", "tennis balls", "an old slipper"],
    "opens": ["fridge", "back door", "treat cupboard"],
    "vet_issue": ["ate half a sock", "a thorn in the paw", "an ear infection"],
    "subj0": ["law", "medicine", "economics"], "subj1": ["philosophy", "geography", "music"],
    "uni": [("UCL", "University College London"), ("LSE", "the London School of Economics"),
            ("KCL", "King's College London"), ("UEA", "the University of East Anglia")],
    "city": [("NYC", "New York City"), ("LA", "Los Angeles"), ("SF", "San Francisco"),
             ("KL", "Kuala Lumpur"), ("BA", "Buenos Aires")],
    "plan": ["Museums and pizza", "Food markets and a bike tour", "Beaches and a cooking class"],
    "highlight": ["the sunset boat trip", "a jazz bar in a basement", "the night market"],
    "col_role": ["office manager", "data analyst", "sales lead"],
    "prev_job": ["pastry chef", "professional cyclist", "submarine engineer", "ballet dancer"],
    "event": ["leaving drinks", "birthday barbecue", "quiz night"],
    "venue": ["the Crown and Anchor", "a rooftop in Shoreditch", "the bowling alley"],
    "company": ["Ferrocene", "Brightloom", "Quillmark"],
    "body": ["ankle", "knee", "wrist"], "surface": ["track", "trail", "stairs"],
    "advice": ["no hills for three weeks", "calf raises every day", "swim instead of run"],
    "back_to": ["full training", "hill reps", "the Tuesday track session"],
    "race": ["Harbour 10K", "Riverside Half", "Fell Relay"],
    "finish": ["38:12", "1:24:50", "41:07"], "place_res": ["third in age group", "a new PB"],
    "broken": ["boiler", "shower", "kitchen window"], "weeks": ["three", "five"],
    "amount": ["£80 a month", "£120 a month", "ten percent"],
    "rent_month": ["April", "September", "January"],
    "owner": ["Uncle Ray", "the neighbours", "Grandad"], "kid": ["Poppy", "Alfie"],
    "car": [("Volvo", "Volvo estate"), ("Fiesta", "Ford Fiesta"), ("Land Rover", "Land Rover")],
    "nick": ["the Tank", "Old Bessie", "the Biscuit Tin"],
    "mot": ["the brakes", "a cracked windscreen", "rusty sills"],
    "place": ["Cornwall", "the Lake District", "Whitby"],
    "nan_walk": ["the post office", "the end of the road", "the bus stop"],
    "dish": ["shepherd's pie", "bread pudding", "lamb stew"], "dish_whose": ["your", "the"],
    "trick": ["a spoon of Marmite", "nutmeg", "browning the onions for ages"],
    "baby_kind": ["girl", "boy"], "baby": ["Ottilie", "Arlo", "Wilf", "Maisie"],
    "milestone": ["crawling", "walking", "saying dada"],
    "band": ["Velvet Kettle", "The Dry Docks", "Static Hares"],
    "gig_venue": ["the Windmill", "the Lexington", "the Fleece"],
    "pay": ["pizza", "drink tokens", "exposure"],
    "org": [("NHS", "National Health Service"), ("BBC", "British Broadcasting Corporation"),
            ("RNLI", "Royal National Lifeboat Institution"), ("V&A", "Victoria and Albert Museum")],
    "offer": ["four days a week", "remote on Fridays", "a start in March"],
    "block0": ["base miles, four easy runs and one tempo", "hills twice a week"],
    "block1": ["intervals on the track", "a taper, volume halved"],
    "session_pb": ["Nailed it, 6x800 all under 2:40.", "Hit a 5K PB in the tempo."],
}  # fmt: skip
NAMES = {
    "F": "Wren Tobias Marisol Kwame Saoirse Anders Lucia Rohan Beatriz Emeka Ilse Callum",
    "P": "Marguerite Desmond Rosalind Gideon Philippa Hamish",
    "C": "Brennan Odile Ferran Yusuf Agnieszka Colm",
}
THIRD = "Cosmo Juno Fenna Tavish Delphine Otto Imogen Lorcan Sunniva Caspar".split()
PETS = "Pickle Dumpling Marmite Sprout Fudge Crumpet Noodle Bramble".split()
SMALL = {
    "F": "Who finished the oat milk?|Bins go out tonight, your turn.|Wifi is down again.|Someone "
         "left the hob on.|Can we get a new sofa, the springs are murdering me.|Are we doing the "
         "Sunday roast?|There's a weird smell in the hallway.",
    "P": "Are you eating properly?|It's been raining here all week.|Your father's building a shed"
         ", god help us.|Did you get my parcel?|The garden's full of slugs this year.|Don't "
         "forget your cousin's birthday.|I saw your old teacher at the shops.",
    "C": "How did you sleep?|Drink more water this week.|Session moved to 7am tomorrow.|Log your "
         "runs in the app please.|Windy on the track today.|Stretch after, not before.",
    "": "Long day.|So tired today.|Saw a fox on the way home.|My phone died at lunch.|The "
        "train was cancelled again.|Made pancakes for dinner.|Binge-watched a baking show.|It's "
        "freezing, the heating's on already.|Found a tenner in my old coat!|The hay fever is "
        "brutal today.|Bus driver sang the whole route.|Tried oat milk in tea. Never again.|"
        "Did you see the moon last night?|I've got a cold coming, I can feel it.|Got soaked "
        "walking back.|Finally cleared my emails.|Our street is being dug up again.|Can't "
        "decide what to cook tonight.|Fell asleep on the sofa at nine.|The new series is "
        "terrible, I'm still watching it.",
}  # fmt: skip
ANSWER = "Fine, thanks.|Not bad.|Yeah, all good.|Ask me tomorrow.|Sure.".split("|")
REPLY = ("Ha, fair.|Ugh.|Same honestly.|Oh no.|Nice one.|Right?|Fair enough.|Hmm, noted.|"
         "Haha.|Ok!|Will do.|Love that.").split("|")  # fmt: skip
#: (whose cast member: the speaker's "own" or the "other" speaker's, text)
MENTIONS = [
    ("other", "sib", "Say hi to {sib} from me."),
    ("own", "col", "{col} says hello."),
    ("other", "sib", "How's {sib} getting on?"),
    ("own", "col", "Saw {col} at the shops."),
    ("own", "pet", "{pet} is asleep on my bed again."),
    ("own", "pet", "{pet} stole a sock."),
]
DECOYS = ("My mate Gus's dog can open doors too.|Ottilie from my course switched subjects "
          "as well.|A guy at work went to Lisbon, loved it.|Hettie rolled her ankle on the stairs "
          "once.|Our old landlord never fixed anything.|Saw a car just like that in "
          "Margate.|Bernard ran that race years ago.").split("|")  # fmt: skip
#: (phrase, days back, or None: the week before; "last <weekday>" is computed).
WHEN = [("yesterday", 1), ("the day before yesterday", 2), ("three days ago", 3),
        ("a fortnight ago", 14), ("two weeks ago", 14), ("this morning", 0),
        ("last weekend", "weekend"), ("last {wd}", "weekday"), ("on {wd}", "weekday")]  # fmt: skip
#: Small talk made of parts (what, when, how it went): "Cleaned the oven at lunch, never again."
DOINGS = (
    "Cleaned the oven|Went for a swim|Fixed the wobbly shelf|Did a big food shop|Walked into "
    "town|Repotted the basil|Sorted the recycling|Baked a lemon cake|Called the bank about my "
    "card|Went to the gym|Watched the football|Ironed every shirt I own|Tidied the cupboard "
    "under the stairs|Tried a new curry recipe|Got a haircut|Queued at the post office|Cycled "
    "the long way round|Assembled a flat-pack wardrobe"
).split("|")
SMALL_WHEN = ["this morning", "after work", "at lunch", "earlier", "today", ""]
SMALL_TAIL = ["", ", what a day", ", never again", ", very satisfying", " and now I'm shattered"]
