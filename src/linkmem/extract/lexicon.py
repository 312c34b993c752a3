"""Word lists used by the extraction rules (all lower-case; written for linkmem).

Each list is a frozenset so lookups are O(1) and nothing can mutate it at run time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: spaCy NER labels that name something worth linking.
KEEP_LABELS: frozenset[str] = frozenset(
    {
        "PERSON",
        "ORG",
        "GPE",
        "LOC",
        "FAC",
        "PRODUCT",
        "WORK_OF_ART",
        "EVENT",
        "NORP",
        "LAW",
        "LANGUAGE",
    }
)

#: spaCy NER labels for amounts, dates and times: never entities, and their tokens are
#: kept out of name spans and topics.
REJECT_LABELS: frozenset[str] = frozenset(
    {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"}
)

#: Nouns with no content of their own. A trailing one is dropped from a noun phrase
#: ("machine learning stuff" gives "machine learning"); what is left must still be a
#: compound of two or more words.
EMPTY_HEADS: frozenset[str] = frozenset(
    """
    thing things stuff way ways kind kinds sort sorts type types lot lots bit bits
    piece pieces part parts aspect aspects something anything everything nothing
    one ones someone everyone anyone somebody everybody anybody
    """.split()
)

#: Broad nouns that make a topic only with a noun in front of them ("business idea",
#: "hiking experience"), never with an adjective alone ("great time", "rainy day").
GENERIC_HEADS: frozenset[str] = frozenset(
    """
    idea ideas time times day days week weeks month months year years moment period
    place places spot location point points end side case fact example instance
    situation experience result results outcome level number amount total range size
    method approach process step steps option options choice feature features
    issue issues problem problems question questions answer topic subject matter area
    info information data content work job task tasks activity item items detail
    details style color colour version form shape list set group series reason
    purpose goal need needs plan plans change changes update updates tool tools
    people person folks guy guys man men woman women
    """.split()
)

#: Occasions of an activity: dropped after a compound that names the activity ("chess club
#: meeting" -> "chess club"), kept after a single noun ("team meeting").
OCCASION_HEADS: frozenset[str] = frozenset(
    """
    meeting meetup session schedule discussion gathering event signup sign-up
    registration fee membership recap screening rehearsal
    """.split()
)

#: Words naming the participants of an agent conversation, or the conversation itself:
#: never an entity on their own ("the user", "my assistant", "Memory").
GENERIC_ROLES: frozenset[str] = frozenset(
    """
    user users assistant assistants agent agents bot bots chatbot model
    customer customers client clients person people human humans individual
    memory memories message messages conversation conversations chat chats
    session sessions system systems operator admin
    """.split()
)

#: Capitalised words that head lists, notes and chat replies rather than name anything.
GENERIC_SINGLES: frozenset[str] = frozenset(
    """
    note notes summary overview details detail tips tip ideas idea steps step features
    feature pros cons examples example todo to-do update updates reminder reminders
    question questions answer answers issue issues important warning info yes no ok okay
    hi hello hey thanks thank please sorry sure great top bottom first last next
    asap fyi btw imo imho lol tbh tbd eta faq aka diy etc vs n/a re fw fwd subject edit ps
    inc inc. ltd ltd. llc corp corp. co co. plc gmbh
    """.split()
)

#: Adjectives (and a few circumstantial nouns) that describe without specifying; they are
#: dropped from topics, which need a modifier outside this list ("Italian food" yes,
#: "great time" and "side project" no).
VAGUE_ADJECTIVES: frozenset[str] = frozenset(
    """
    good bad great best better worse worst nice fine awesome amazing excellent terrible
    awful wonderful fantastic lovely perfect poor horrible cool fun funny boring
    interesting exciting favorite favourite fave beloved preferred usual typical normal
    regular standard common general overall specific particular certain various
    different similar same other another such own whole entire full total complete
    main major minor key important essential basic simple easy hard difficult tough
    big small large little huge tiny long short high low tall deep wide narrow
    new old recent latest current former previous upcoming future past early late
    first last next final initial second third prior later earlier
    many much few several some more most less least enough numerous multiple single
    real true actual possible likely potential probable sure clear obvious
    quick slow fast busy free open available ready able unable happy sad glad
    strong weak nearby near far top bottom additional extra further various
    serious lot kinda sorta quite very really pretty annual daily weekly monthly
    top side bottom only everyday such own
    """.split()
)

#: Leading words stripped from a name span or entity ("the UK" -> "UK", "Dr. Patel" ->
#: "Patel", "my Max" -> "Max").
LEADING_STRIP: frozenset[str] = frozenset(
    """
    the a an this that these those my our your his her their its
    dr dr. mr mr. mrs mrs. ms ms. mx mx. prof prof. sir madam dame
    """.split()
)

#: Courtesy titles; never an entity on their own.
TITLES: frozenset[str] = frozenset(
    "dr dr. mr mr. mrs mrs. ms ms. mx mx. prof prof. sir madam dame st st.".split()
)

#: Lower-case words allowed between two capitalised words of one name ("Bank of
#: America", "Johnson & Johnson", "Ludwig van Beethoven").
NAME_CONNECTORS: frozenset[str] = frozenset(
    "of the for in & de da del della di van von der le la du".split()
)

#: NER labels of names that a detached inner word splits ("Leo to Lisbon" read as one ORG),
#: and the parts of speech of such a word: a preposition, or a verb ("Maria adopting Coco").
#: Titles keep theirs (WORK_OF_ART "Road to Perdition", "Murder on the Orient Express").
SPLIT_LABELS: frozenset[str] = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP"})
DETACHED_POS: frozenset[str] = frozenset({"ADP", "SCONJ", "VERB"})

#: Prepositions inside titles ("Road to Nowhere"), and verbs of liking, hearing or performing
#: that take a title as their object. A title's preposition hangs from the word before it,
#: or (a parse error) from such a verb ("I love Ode to Joy"); the preposition between two
#: names hangs from a verb of moving or giving ("took Leo to Lisbon"). Only "to": "with",
#: "from" and "at" join two names far more often than they make a title ("Kyoto with Priya",
#: "Anna from Boston", "Tom at Google").
TITLE_PREPOSITIONS: frozenset[str] = frozenset({"to"})
TITLE_VERBS: frozenset[str] = frozenset(
    """
    love loves loved loving like likes liked enjoy enjoys enjoyed adore adores adored
    hear hears heard hearing listen listens listened listening hum hums hummed humming
    sing sings sang sung singing play plays played playing watch watches watched watching
    perform performs performed rehearse rehearsed practise practised practice practiced
    recite recited quote quoted cover covered stream streamed hate hated prefer preferred
    """.split()
)

#: Month and weekday names: a name only when nothing around them reads as a date.
CALENDAR_WORDS: frozenset[str] = frozenset(
    """
    january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec
    monday tuesday wednesday thursday friday saturday sunday
    """.split()
)

#: Weekdays, written out or cut short: never a name on their own, though the NER sometimes
#: calls "Fri" or "Tues" a person. "Sat", "Sun", "Mon" and "Wed" are left out (words and names).
WEEKDAYS: frozenset[str] = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday tue tues thu thur thurs fri
    """.split()
)

#: Chat words the tagger reads as names when they open a sentence ("Yum, Nate!", "Gotcha").
CHAT_WORDS: frozenset[str] = frozenset(
    "yum yummy gotcha woo looky lemme gimme dunno y'all y’all ya'll".split()
)

#: Chat shorthand that never names anything, in any case or position: abbreviations and
#: interjections of typed chat ("Idk tbh", "Lmao that's hilarious", "Ngl i miss college").
#: Laughs and stretched words ("hahaha", "yesss") are told by their shape
#: (``dialogue.is_chat_word``). Words that are also names or common acronyms ("Ty", "BC",
#: "GM", "DM") are left out.
CHAT_SHORTHAND: frozenset[str] = frozenset(
    """
    idk idc ikr imo imho tbh tbf ngl lmk lmao lmfao rofl smh ttyl brb btw fyi hbu wbu wyd
    np nvm jk ily ilysm omw rn tmrw tmr thx tysm pls plz srsly ofc obvi obv prolly irl
    afaik fwiw tho bruh xoxo omg omfg wtf wth nah naw nope yea yeah yah yup yep yas yass
    ugh ew eww ah ahh aha oh ooh oof ouch welp meh hmm hm huh hehe haha lol aw aww yay
    woohoo okie okey kk
    """.split()
)

#: Words that, before a calendar word, make it a date ("in May", "next Friday").
TEMPORAL_CUES: frozenset[str] = frozenset(
    """
    in on by since until till before after during next last this every early late mid
    from through throughout each past coming until around
    """.split()
)

#: First words of a quotation that is reported speech rather than a title or a term.
SPEECH_STARTS: frozenset[str] = frozenset(
    """
    i i'm i'll i've i'd i’m i’ll i’ve i’d you you're you’re we we're we’re we'll we’ll
    he he's he’s she she's she’s they they're they’re it's it’s let's let’s please
    """.split()
)

#: Dotted abbreviations that are prose, not code ("e.g", "Ph.D").
DOTTED_PROSE: frozenset[str] = frozenset("e.g i.e a.m p.m ph.d u.s u.k et.al etc.al".split())

#: Period tokens that stay part of a date even when capitalised ("Q3", "FY2024", "3rd").
PERIOD_TOKEN: re.Pattern[str] = re.compile(
    r"^(Q[1-4]|H[12]|FY\d{2,4}|\d+(st|nd|rd|th)|[AP]M)$", re.IGNORECASE
)

#: Tokens after which a capitalised word starts a sentence, a list item or a quotation.
SENTENCE_OPENERS: frozenset[str] = frozenset('.!?:;"“‘(*-•–—#>+')

#: Plural acronyms are common nouns ("APIs", "URLs"), not names.
PLURAL_ACRONYM: re.Pattern[str] = re.compile(r"^[A-Z]{2,}s$")

#: Parts of speech a capitalised mid-sentence word may carry and still be a name (the
#: tagger reads "Will" as a modal verb).
NAME_POS: frozenset[str] = frozenset({"NOUN", "PROPN", "AUX", "VERB", "ADJ"})

#: Dependency roles of a noun phrase: a capitalised word in one of them is a name.
NOMINAL_DEPS: frozenset[str] = frozenset(
    "nsubj nsubjpass dobj pobj iobj appos conj attr oprd compound".split()
)

# ------------------------------------------------------------------ shapes of text
# Regular expressions are kept here with the word lists: they are the "lexicon" of
# code-like and quoted text.


def _any_shape(word: str) -> bool:
    return True


def _path_shape(word: str) -> bool:
    """Rooted, two or more slashes, or a file name at the end: not "and/or", "km/h"."""
    rooted = word.startswith(("/", "~/", "./", "../"))
    has_ext = re.search(r"\w\.[A-Za-z]\w*$", word.rsplit("/", 1)[-1]) is not None
    return _has_letter(word) and (rooted or word.count("/") >= 2 or has_ext)


def _dotted_shape(word: str) -> bool:
    """Not a dotted abbreviation ("e.g", "U.S")."""
    return word.lower() not in DOTTED_PROSE and any(len(p) > 1 for p in word.split("."))


def _version_shape(word: str) -> bool:
    return re.fullmatch(r"\d{1,2}\.\d{1,2}\.(\d{2}|\d{4})", word) is None  # a date


def _camel_shape(word: str) -> bool:
    return re.search(r"[A-Z][a-z]", word) is not None  # "getUser", not "macOS"


def _has_letter(word: str) -> bool:
    return any(c.isalpha() for c in word)


IDENTIFIER_SHAPES: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = tuple(
    (re.compile(pattern), accept)
    for pattern, accept in (
        (r"\bhttps?://[^\s<>\"'`]+", _any_shape),  # URL
        (r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+", _any_shape),  # e-mail
        (r"`([^`\s]{2,80})`", _has_letter),  # `code`
        (r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b", _any_shape),  # UUID
        (r"(?<![\w/.~])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+", _path_shape),  # path
        (r"\b[A-Z][A-Z0-9]{1,9}-\d+\b", _any_shape),  # ticket: JIRA-123
        (r"(?<![\w&#])#\d+\b", _any_shape),  # issue: #1234
        (r"(?<![\w.])v\d+(?:\.\d+)*(?:-[0-9A-Za-z]+)?\b", _any_shape),  # v2, v1.2.3
        (r"(?<![\w.])\d+(?:\.\d+){2,}(?:-[0-9A-Za-z]+)?\b", _version_shape),  # 1.4.0-rc1
        (r"(?<!\w)__[A-Za-z]\w*__(?!\w)", _any_shape),  # __init__
        (r"(?<![\w.@/-])[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+", _dotted_shape),  # a.b.c
        (r"(?<![\w.])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*(?!\w)", _any_shape),  # a_b
        (r"(?<![\w.])[a-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w)", _camel_shape),  # camelCase
        (r"(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}(?!\w)", _any_shape),  # PascalCase
        (r"(?<![\w.])([A-Za-z_]\w*)\(\)", _any_shape),  # call()
    )
)
"""Code-like shapes, earlier ones winning where matches overlap. A pattern's group,
when it has one, is the identifier. PascalCase needs three humps ("UserProfileService"),
so two-hump brand names ("GitHub", "JavaScript") stay proper names."""

#: Quotation shapes; group 1 is the quoted text. A straight or curly single quote opens
#: only after a space or bracket and closes only before a non-letter, and an apostrophe
#: between two letters is part of the text, so "don't" and "Max's" never open a quote.
QUOTE_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r'"([^"\n]{1,200})"',
        r"“([^“”\n]{1,200})”",
        r"«([^«»\n]{1,200})»",
        r"(?:^|(?<=[\s(\[{,;:]))'((?:[^'\n]|(?<=\w)'(?=\w))+?)'(?!\w)",
        r"‘((?:[^‘’\n]|(?<=\w)’(?=\w))+?)’(?!\w)",
    )
)

# ------------------------------------------------------------------ holidays and software

#: Holidays and festivals the NER often reads as dates or people ("Ramadan", "Halloween this
#: year", "Valentine's Day"); matched only when capitalised. Names of the shape "<Capitalised>
#: Day" or "... Eve" inside a date are found without a list ("Boxing Day", "Labor Day").
HOLIDAYS: frozenset[str] = frozenset(
    {
        *"""christmas xmas easter halloween thanksgiving diwali deepavali hanukkah chanukah
        ramadan eid passover pesach kwanzaa holi navratri vesak advent pentecost purim
        sukkot nowruz songkran hogmanay juneteenth oktoberfest""".split(),
        "yom kippur",
        "rosh hashanah",
        "chinese new year",
        "lunar new year",
        "new year",
        "new year's",
        "mardi gras",
        "cinco de mayo",
        "day of the dead",
        "bonfire night",
        "guy fawkes night",
        "fourth of july",
        "good friday",
        "black friday",
        "cyber monday",
        "eid al-fitr",
        "eid al-adha",
        "valentine's day",
        "mother's day",
        "father's day",
        "new year's day",
        "new year's eve",
        "st. patrick's day",
        "st patrick's day",
        "saint patrick's day",
        "mid-autumn festival",
    }
)

#: The last word of a capitalised holiday name found inside a date ("Boxing Day").
HOLIDAY_ENDINGS: frozenset[str] = frozenset("day eve night".split())

#: Software usually written in lower case and rarely meant as anything else in a memory, so
#: it stands alone ("we set up redis", "git", "docker"). Names that are everyday English
#: ("rust", "flask", "celery", "pandas", "slack") are left to the structural cues, which
#: take only words the pipeline's lemma tables do not know.
SOFTWARE_NAMES: frozenset[str] = frozenset(
    """
    redis nginx postgres postgresql pgbouncer pgadmin memcached kubectl kubernetes k8s
    minikube mongodb mysql mariadb sqlite sqlite3 duckdb clickhouse elasticsearch
    opensearch kibana logstash fluentd rabbitmq haproxy traefik grafana terraform ansible
    systemd crontab openssl sshd iptables wireguard openvpn npm pnpm webpack tmux zsh
    htop rsync wget ffmpeg inkscape vscode neovim github gitlab ubuntu debian centos
    django numpy scipy pytorch tensorflow jupyter kafka docker git nodejs
    """.split()
)

#: Nouns that, right after an unknown lower-case word, mark it as software ("pgbouncer
#: config", "the foo cluster"); after a software name they add nothing, so "redis log"
#: gives "redis" and no topic.
SOFTWARE_FACETS: frozenset[str] = frozenset(
    """
    config configs configuration server servers log logs cluster clusters daemon
    container containers instance instances plugin plugins extension extensions package
    packages library client driver image images pod pods replica replicas schema query
    queries queue queues dashboard dashboards deployment deployments cli repo
    repository install installation upgrade setup binary proxy backend db database
    version versions
    databases worker workers cache process module modules
    """.split()
)

#: Everyday technical nouns and acronyms that the English lemma tables do not know but that
#: name no product ("the app config", "install the vpn", "json config").
COMMON_TECH_WORDS: frozenset[str] = frozenset(
    """
    app apps smartphone smartphones login logins username usernames backend backends
    frontend frontends api apis ios vpn dns ssl tls gpu gpus cpu cpus ssd hdd json yaml
    toml csv xml sql css html http https url urls ui ux db dbs wifi bluetooth usb hdmi
    emoji emojis selfie selfies vlog vlogs ebook ebooks webcam dashcam covid diy bbq saas
    crm erp cdn os repo repos config configs localhost sdk cli gui ide infra devops prod
    staging dev qa ci llm llms chatbot chatbots firmware middleware dataset datasets
    """.split()
)

#: Verbs whose object, when it is an unknown lower-case word, is software ("install
#: pgbouncer", "restarted traefik").
SOFTWARE_VERBS: frozenset[str] = frozenset(
    """
    install instal uninstall reinstall restart deploy redeploy upgrade downgrade configure
    reconfigure compile containerize dockerize
    """.split()
)
