"""Places written in lower case: countries, US states, continents and large cities.

Chat messages are often typed in lower case ("we flew to lisbon in july"), and the name
rules find names by their capitals (the NER often tags a lower-case place, but the rules keep
no lower-case NER span: most are common words), so such a place is no entity: a question that
asks for "the cities Jon has visited" then finds none of the turns that name one. The names
below are matched in lower case. Names that are everyday English words in lower case
("turkey", "china", "chile", "jersey", "nice", "reading", "bath", "split", "mobile") are left
out.
"""

from __future__ import annotations

from collections.abc import Iterator

from linkmem.extract.base import EntityKind
from linkmem.extract.spans import NAME, Candidate, Doc, make

#: Multi-word names are written with "_": "new_york" is "new york".
_LISTED = """
    afghanistan albania algeria andorra angola argentina armenia australia austria
    azerbaijan bahamas bahrain bangladesh barbados belarus belgium belize bhutan bolivia
    bosnia botswana brazil brunei bulgaria cambodia cameroon canada colombia croatia cuba
    cyprus czechia denmark ecuador egypt england estonia ethiopia fiji finland france
    germany ghana greece greenland guatemala haiti holland honduras hungary iceland india
    indonesia iran iraq ireland israel italy jamaica japan kazakhstan kenya korea kosovo
    kuwait laos latvia lebanon liberia libya liechtenstein lithuania luxembourg madagascar
    malawi malaysia maldives malta mexico moldova monaco mongolia montenegro morocco
    mozambique myanmar namibia nepal netherlands nicaragua nigeria norway oman pakistan
    palestine panama paraguay peru philippines poland portugal qatar romania russia rwanda
    scotland senegal serbia singapore slovakia slovenia somalia spain sudan sweden
    switzerland syria taiwan tanzania thailand tibet tunisia uganda ukraine uruguay
    uzbekistan venezuela vietnam wales yemen zambia zimbabwe
    costa_rica el_salvador new_zealand south_africa south_korea north_korea sri_lanka
    saudi_arabia puerto_rico dominican_republic czech_republic united_states
    united_kingdom hong_kong
    alabama alaska arizona arkansas california colorado connecticut delaware florida
    hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland
    massachusetts michigan minnesota mississippi missouri montana nebraska nevada ohio
    oklahoma oregon pennsylvania tennessee texas utah vermont virginia wisconsin wyoming
    new_hampshire new_jersey new_mexico new_york north_carolina north_dakota rhode_island
    south_carolina south_dakota west_virginia
    europe asia africa antarctica scandinavia caribbean
    amsterdam athens atlanta auckland baltimore bangkok barcelona beijing berlin bogota
    boston brisbane brussels budapest cairo calgary chicago copenhagen dallas delhi denver
    detroit dubai dublin edinburgh frankfurt geneva glasgow hamburg havana helsinki
    honolulu houston istanbul jakarta jerusalem johannesburg kyoto lisbon liverpool london
    lyon madrid manchester manila marseille melbourne miami milan montreal moscow mumbai
    munich nairobi naples nashville oslo ottawa paris philadelphia pittsburgh portland
    prague reykjavik rome seattle seoul seville shanghai stockholm taipei tallinn tampa
    tokyo toronto vancouver venice vienna warsaw zurich porto krakow
    los_angeles san_francisco san_diego las_vegas new_orleans rio_de_janeiro buenos_aires
    mexico_city cape_town tel_aviv salt_lake_city kansas_city
"""
PLACE_NAMES: frozenset[str] = frozenset(name.replace("_", " ") for name in _LISTED.split())
#: The first word of each listed name: only a token in this set starts a lookup.
_FIRST_WORDS = frozenset(name.split()[0] for name in PLACE_NAMES)
#: The longest listed name, in words ("salt lake city", "rio de janeiro").
MAX_PLACE_WORDS = max(len(name.split()) for name in PLACE_NAMES)


def place_candidates(doc: Doc) -> Iterator[Candidate]:
    """Listed places written in lower case, the longest listed name at each position."""
    i = 0
    while i < len(doc):
        size = _listed_at(doc, i)
        if size:
            yield make(doc, list(doc[i : i + size]), EntityKind.PROPER, NAME)
        i += max(size, 1)


def _listed_at(doc: Doc, i: int) -> int:
    """How many words of a listed place start at token ``i`` (0: none)."""
    if doc[i].text not in _FIRST_WORDS:
        return 0
    for size in range(min(MAX_PLACE_WORDS, len(doc) - i), 0, -1):
        toks = doc[i : i + size]
        if " ".join(t.text for t in toks) in PLACE_NAMES:
            return size
    return 0
