"""One entity absorbing another, recorded so it can be undone: the mechanics that the build's consolidation
(``consolidate.py``) and the human edits replayed on load (``edits.py``) share, below both.

Two names are the same entity when their ``name_key`` is; a merge keeps a snapshot of what it absorbed
(``record_merge``), so ``unmerge`` gives the alias its own profile back.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from .anchors import AnchorSet, Attribute, Entity, Merge, Relation

_NON_WORD = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an|my|our)\s+")


def name_key(name: str) -> str:
    """Normalized form under which two names count as the same entity."""
    text = unicodedata.normalize("NFKC", name).casefold().replace("'s", "")
    text = _NON_WORD.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    return _LEADING_ARTICLE.sub("", text)


def slug(name: str, taken: set[str], prefix: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name_key(name)).strip("-")[:40] or "x"
    candidate = f"{prefix}-{base}"
    n = 2
    while candidate in taken:
        candidate = f"{prefix}-{base}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


def extend_unique(items: list, new: Iterable) -> None:
    for x in new:
        if x not in items:
            items.append(x)


def _merge_items(into: list, new: Iterable, key) -> None:
    """Add ``new`` attributes or relations to ``into``; an item with the same key only adds its sources."""
    index = {key(x): x for x in into}
    for x in new:
        k = key(x)
        if k in index:
            extend_unique(index[k].source_ids, x.source_ids)
        else:
            index[k] = x.model_copy(deep=True)
            into.append(index[k])


def _merge_attributes(into: list[Attribute], new: Iterable[Attribute]) -> None:
    _merge_items(into, new, lambda a: (name_key(a.key), name_key(a.value)))


def _merge_relations(into: list[Relation], new: Iterable[Relation]) -> None:
    _merge_items(into, new, lambda r: (name_key(r.predicate), name_key(r.target)))


def absorb(target: Entity, other: Entity, votes: dict[int, Counter] | None = None) -> None:
    """Fold ``other``'s content into ``target`` (no merge record: same name)."""
    extend_unique(target.aliases, [a for a in other.aliases if name_key(a) != name_key(target.name)])
    if other.name != target.name and name_key(other.name) != name_key(target.name):
        extend_unique(target.aliases, [other.name])
    if not target.description and other.description:
        target.description = other.description
    if votes is not None and other.type not in ("", "other"):
        votes.setdefault(id(target), Counter())[other.type] += type_weight(other)
    if target.type in ("", "other") and other.type not in ("", "other"):
        target.type = other.type
    if typed_by_context(other) and not typed_by_context(target):
        target.description = other.description or target.description
    _merge_attributes(target.attributes, other.attributes)
    _merge_relations(target.relations, other.relations)
    extend_unique(target.source_ids, other.source_ids)
    target.mentions += other.mentions or len(other.source_ids)


def typed_by_context(entity: Entity) -> bool:
    """The extractor typed it from a naming pattern ("my dog Biscuit") and said why (attribute ``why``)."""
    return any(a.key == "why" for a in entity.attributes)


def type_weight(entity: Entity) -> int:
    """Votes of one batch profile for its type: a type from context outweighs any number of NER guesses."""
    weight = entity.mentions or len(entity.source_ids) or 1
    return weight * 1000 if typed_by_context(entity) else weight


def record_merge(target: Entity, alias: Entity, reason: str) -> None:
    snapshot = alias.model_dump(mode="json")
    before = {"type": target.type, "description": target.description}
    aliases_before = set(target.aliases)
    absorb(target, alias)
    target.merges.append(Merge(alias=alias.name, alias_id=alias.id, reason=reason,
                               source_ids=list(alias.source_ids), snapshot=snapshot,
                               added_aliases=[a for a in target.aliases if a not in aliases_before],
                               target_before=before))


def unmerge(anchors: AnchorSet, entity_id: str, alias: str) -> AnchorSet:
    """Undo one recorded merge: the alias gets its own profile back, the target loses what it brought."""
    result = anchors.model_copy(deep=True)
    target = next((e for e in result.entities if e.id == entity_id), None)
    if target is None:
        raise KeyError(f"no entity {entity_id!r}")
    merge = next((m for m in target.merges if m.alias == alias), None)
    if merge is None:
        raise KeyError(f"entity {entity_id!r} has no merge of {alias!r}")
    if not merge.snapshot:
        raise KeyError(f"the merge of {alias!r} into {entity_id!r} kept no snapshot (an older store); rebuild to split it")
    restored = Entity.model_validate(merge.snapshot)
    taken = {e.id for e in result.entities}
    if restored.id in taken:
        restored.id = slug(restored.name, taken, "ent")
    own_sources = set(target.source_ids) - set(restored.source_ids)
    target.merges = [m for m in target.merges if m is not merge]
    added = {name_key(a) for a in merge.added_aliases} | {name_key(alias)}
    target.aliases = [a for a in target.aliases if name_key(a) not in added]
    if merge.target_before:
        target.type = merge.target_before.get("type", target.type)
        target.description = merge.target_before.get("description", target.description)
    target.attributes = [a for a in target.attributes if not _only_from(a.source_ids, restored, own_sources)]
    target.relations = [r for r in target.relations if not _only_from(r.source_ids, restored, own_sources)]
    for a in target.attributes + target.relations:
        a.source_ids = [s for s in a.source_ids if s in own_sources or s not in restored.source_ids]
    target.source_ids = [s for s in target.source_ids if s in own_sources or s not in restored.source_ids]
    target.mentions = max(0, target.mentions - restored.mentions)
    result.entities.append(restored)
    return result


def _only_from(source_ids: list[str], restored: Entity, own: set[str]) -> bool:
    return bool(source_ids) and all(s in restored.source_ids and s not in own for s in source_ids)
