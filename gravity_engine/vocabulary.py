"""The words anchors are typed and related with: entity types, the relation vocabulary, and how other words for
them (a store's "mother", an annotator's "company") read into it. Used by extractors, the gold format and review."""

from __future__ import annotations

import re
import unicodedata

ENTITY_TYPES = ("person", "pet", "organization", "place", "project", "product", "artifact", "event", "other")

# Store (or annotator) type words and the gold type they mean.
TYPE_SYNONYMS: dict[str, str] = {
    **{w: "organization" for w in (
        "organisation", "org", "orgs", "company", "business", "employer", "institution", "club", "team", "school",
        "university", "college", "shop", "nonprofit", "charity", "agency", "band", "firm", "group", "society")},
    **{w: "place" for w in (
        "location", "loc", "gpe", "fac", "facility", "city", "town", "village", "country", "region", "area",
        "neighborhood", "neighbourhood", "venue", "address", "street", "building")},
    **{w: "person" for w in ("human", "people", "individual", "per", "persons")},
    **{w: "pet" for w in ("animal", "dog", "cat")},
    **{w: "artifact" for w in (
        "artefact", "work_of_art", "book", "film", "movie", "song", "album", "artwork", "work", "novel")},
    **{w: "product" for w in ("device", "gadget", "brand")},
    **{w: "project" for w in ("initiative", "program", "programme")},
    **{w: "event" for w in ("competition", "festival", "tournament", "race", "conference")},
}

# The predicate vocabulary and how a store's predicates read into it: store word -> (predicate, flipped),
# where flipped means the store's subject is the object of the vocabulary predicate.
VOCABULARY = ("works_at", "lives_in", "sibling_of", "parent_of", "partner_of", "friend_of", "colleague_of",
              "manager_of", "owns_pet", "member_of", "studies_at", "works_on", "likes", "dislikes")
SYMMETRIC = frozenset({"sibling_of", "partner_of", "friend_of", "colleague_of", "cousin_of", "neighbor_of",
                       "neighbour_of", "roommate_of", "flatmate_of"})


def _readings() -> dict[str, tuple[str, bool]]:
    direct = {
        "works_at": "works_at works_for work_at work_for worked_at worked_for employed_at employed_by job_at",
        "lives_in": "lives_in live_in lived_in living_in resides_in based_in moved_to home_in",
        "sibling_of": "sibling_of sister_of brother_of sibling sister brother siblings_with has_sister has_brother",
        "parent_of": "parent_of mother_of father_of mom_of mum_of dad_of son daughter child kid baby "
                     "has_child has_son has_daughter",
        "partner_of": "partner_of partner husband wife husband_of wife_of boyfriend girlfriend boyfriend_of "
                      "girlfriend_of spouse spouse_of married_to fiance fiancee fiance_of fiancee_of dating",
        "friend_of": "friend_of friend friends_with best_friend best_friend_of",
        "colleague_of": "colleague_of colleague coworker coworker_of co_worker teammate teammate_of works_with",
        "manager_of": "manager_of boss_of supervisor_of manages supervises employee direct_report report",
        "owns_pet": "owns_pet owns has_pet pet dog cat owner_of",
        "member_of": "member_of member joined belongs_to plays_for part_of",
        "studies_at": "studies_at study_at studied_at student_at studying_at attends enrolled_at",
        "works_on": "works_on work_on worked_on working_on leads builds develops contributes_to runs",
        "likes": "likes like loves love enjoys enjoy fan_of prefers",
        "dislikes": "dislikes dislike hates hate detests cant_stand can_t_stand",
    }
    flipped = {
        "parent_of": "child_of son_of daughter_of kid_of baby_of mother mom mum father dad parent "
                     "has_parent has_mother has_father",
        "manager_of": "reports_to managed_by boss manager supervisor works_under",
        "owns_pet": "pet_of owned_by dog_of cat_of",
    }
    out: dict[str, tuple[str, bool]] = {}
    for canon, words in direct.items():
        out.update({w: (canon, False) for w in words.split()})
    for canon, words in flipped.items():
        out.update({w: (canon, True) for w in words.split()})
    return out


PREDICATE_READINGS: dict[str, tuple[str, bool]] = _readings()


def normalize_type(value: str) -> str:
    t = re.sub(r"[^a-z0-9]+", "_", str(value).casefold()).strip("_")
    return TYPE_SYNONYMS.get(t, t)


def normalize_predicate(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", unicodedata.normalize("NFKD", str(value)).casefold()).strip("_")


def predicate_readings(predicate: str) -> list[tuple[str, bool]]:
    """What a predicate may mean in the vocabulary: [(predicate, flipped)]. A word outside the table is
    itself, or, as a bare noun ("uncle"), the flipped ``<noun>_of`` ("X uncle Y": Y is X's uncle)."""
    p = normalize_predicate(predicate)
    if p in PREDICATE_READINGS:
        return [PREDICATE_READINGS[p]]
    return [(p, False)] if p.endswith("_of") else [(p, False), (p + "_of", True)]
