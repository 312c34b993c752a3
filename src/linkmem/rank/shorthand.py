"""Chat shorthand and the words it stands for ("fave pic" is "favorite picture", "yday" is
"yesterday"), read by the keyword terms (``rank.terms``) and by the time expressions of a
memory (``rank.dates``).

Only forms that stand for one word whatever the context: "mo" (a moment, a name), "bro" (an
address), "ytd" (year to date), "u" ("U.S."), "bc" (British Columbia) and "msg" (the additive)
are not read.
"""

from __future__ import annotations

#: Shorthand for a day or a unit of time: a memory's "yday" or "2 wks ago" is dated by it.
TIME_FORMS: dict[str, str] = {
    "yday": "yesterday", "yest": "yesterday", "tmrw": "tomorrow", "tmr": "tomorrow",
    "tmrow": "tomorrow", "2moro": "tomorrow", "2morrow": "tomorrow", "tonite": "tonight",
    "2nite": "tonight", "2day": "today", "nite": "night", "wk": "week", "wks": "weeks",
    "wknd": "weekend", "wknds": "weekends", "wkend": "weekend", "wkends": "weekends",
    "mos": "months", "mth": "month", "mths": "months", "yr": "year", "yrs": "years",
}  # fmt: skip
#: Every form read, the time ones included.
SHORT_FORMS: dict[str, str] = TIME_FORMS | {
    "pic": "picture", "pics": "pictures", "fave": "favorite", "fav": "favorite",
    "faves": "favorites", "favs": "favorites", "vid": "video", "vids": "videos",
    "convo": "conversation", "convos": "conversations", "bday": "birthday",
    "bdays": "birthdays", "fam": "family", "ppl": "people", "gf": "girlfriend",
    "bf": "boyfriend", "sis": "sister", "pup": "puppy", "pups": "puppies", "kiddo": "kid",
    "kiddos": "kids", "doggo": "dog", "vacay": "vacation", "uni": "university",
    "grad": "graduate", "appt": "appointment", "info": "information", "thx": "thanks",
    "pls": "please", "plz": "please", "cuz": "because", "coz": "because", "abt": "about",
    "b4": "before", "tho": "though", "mins": "minutes", "hrs": "hours",
}  # fmt: skip
