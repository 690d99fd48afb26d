"""Compare two stores of one conversation (classic vs llm, model A vs B, before vs after edits).

Anchors are paired by stable keys, never by id: entities by name (then by a name the other side has
as an alias), events by text, date and first source (then by text and a shared source, then, when
both stores use one embedding model, by cosine >= ``event_cosine`` among events citing a common
utterance), topics by label (then by the share of utterances they have in common). Each module
lists the anchors added (only in B), removed (only in A) and changed (with each field before and
after), with their sources. Optionally: the measures of both stores on the conversation's
questions (``measure.measure_conversation``: coverage, recall, temporal grounding per category) and
the anchors each store injects for chosen questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..anchors import MODULES
from ..embed import embedder_for
from ..merging import name_key
from ..store import AnchorStore
from ..anchor_keys import anchor_name, entity_keys, event_key
from ..errors import GravityError
from ..eval.measure import measure_conversation
from ..eval.summary import summarize
from ..hosts import get_host
from ..query.pipeline import GravityQuery


@dataclass
class Side:
    """One anchor as one store has it."""

    id: str
    name: str
    detail: str
    source_ids: list[str]


@dataclass
class FieldChange:
    field: str
    before: str
    after: str


@dataclass
class Changed:
    a: Side
    b: Side
    changes: list[FieldChange]
    matched_by: str  # "key", "alias", "text+source", "cosine 0.91", "sources 0.62"


@dataclass
class ModuleDiff:
    module: str
    added: list[Side] = field(default_factory=list)
    removed: list[Side] = field(default_factory=list)
    changed: list[Changed] = field(default_factory=list)
    unchanged: int = 0

    def summary(self) -> dict[str, Any]:
        return {"module": self.module, "added": len(self.added), "removed": len(self.removed),
                "changed": len(self.changed), "unchanged": self.unchanged}


@dataclass
class StoreDiff:
    a_label: str
    b_label: str
    modules: dict[str, ModuleDiff]
    measures: list[dict[str, Any]] = field(default_factory=list)  # per category: A, B and the change
    prompts: list[dict[str, Any]] = field(default_factory=list)  # per question: injected text A and B
    notes: list[str] = field(default_factory=list)

    def summary_rows(self) -> list[dict[str, Any]]:
        return [self.modules[m].summary() for m in MODULES]


def _side(module: str, a) -> Side:
    if module == "entities":
        detail = a.type
    elif module == "events":
        detail = a.date_label()
    else:
        detail = f"{len(a.sessions)} sessions"
    return Side(a.id, anchor_name(module, a), detail, list(a.source_ids))


def _text(x: Any) -> str:
    if isinstance(x, frozenset):
        return "; ".join(sorted(x))
    return "" if x is None else str(x)


def fields_of(module: str, a) -> dict[str, Any]:
    """The fields a reader compares, as text or sets of text (order inside a list does not matter)."""
    if module == "entities":
        return {"name": a.name, "type": a.type, "aliases": frozenset(a.aliases), "description": a.description,
                "attributes": frozenset(f"{x.key}: {x.value}" for x in a.attributes),
                "relations": frozenset(f"{x.predicate} {x.target}" for x in a.relations)}
    if module == "events":
        return {"what": a.what, "date": a.date_label(), "when_text": a.when_text,
                "participants": frozenset(a.participants), "where": a.where, "session": a.session_id}
    return {"label": a.label, "keywords": frozenset(a.keywords), "summary": a.summary,
            "key_facts": frozenset(f.text for f in a.key_facts), "sessions": frozenset(s.session_id for s in a.sessions),
            "status": a.status}


def _changes(module: str, a, b) -> list[FieldChange]:
    fa, fb = fields_of(module, a), fields_of(module, b)
    out = []
    for name, va in fa.items():
        vb = fb[name]
        if va == vb:
            continue
        if isinstance(va, frozenset):
            out.append(FieldChange(name, _text(va - vb), _text(vb - va)))  # only what differs
        else:
            out.append(FieldChange(name, _text(va), _text(vb)))
    return out


def _pair_exact(left: list, right: list, key) -> list[tuple[int, int]]:
    by_key: dict[Any, list[int]] = {}
    for j, b in enumerate(right):
        by_key.setdefault(key(b), []).append(j)
    pairs = []
    for i, a in enumerate(left):
        js = by_key.get(key(a))
        if js:
            pairs.append((i, js.pop(0)))
    return pairs


def _match(module: str, A: list, B: list, emb_a: np.ndarray | None, emb_b: np.ndarray | None,
           event_cosine: float, topic_overlap: float) -> list[tuple[int, int, str]]:
    pairs: list[tuple[int, int, str]] = []
    free_a, free_b = set(range(len(A))), set(range(len(B)))

    def take(found: list[tuple[int, int]], how: str) -> None:
        for i, j in found:
            if i in free_a and j in free_b:
                pairs.append((i, j, how))
                free_a.discard(i)
                free_b.discard(j)

    if module == "entities":
        take(_pair_exact(A, B, lambda e: name_key(e.name)), "key")
        # a name one side has as an alias ("Mel" vs "Melanie" after a merge)
        keys_b = {}
        for j in sorted(free_b):
            for k in entity_keys(B[j]):
                keys_b.setdefault(k, []).append(j)
        found = []
        for i in sorted(free_a):
            js = {j for k in entity_keys(A[i]) for j in keys_b.get(k, [])}
            if len(js) == 1:
                found.append((i, js.pop()))
        take(found, "alias")
        return pairs
    if module == "events":
        take(_pair_exact(A, B, event_key), "key")
        # same text, sharing any source
        by_text: dict[str, list[int]] = {}
        for j in sorted(free_b):
            by_text.setdefault(name_key(B[j].what), []).append(j)
        take([(i, j) for i in sorted(free_a) for j in by_text.get(name_key(A[i].what), [])
              if set(A[i].source_ids) & set(B[j].source_ids)], "text+source")
        if emb_a is not None and emb_b is not None and free_a and free_b:
            ia, jb = sorted(free_a), sorted(free_b)
            sims = emb_a[ia] @ emb_b[jb].T
            src_a = [set(A[i].source_ids) for i in ia]
            src_b = [set(B[j].source_ids) for j in jb]
            shares = np.array([[bool(sa & sb) for sb in src_b] for sa in src_a], dtype=bool)
            sims = np.where(shares, sims, -1.0)
            order = np.dstack(np.unravel_index(np.argsort(-sims, axis=None, kind="stable"), sims.shape))[0]
            for x, y in order:
                if sims[x, y] < event_cosine:
                    break
                take([(ia[x], jb[y])], f"cosine {sims[x, y]:.2f}")
        return pairs
    take(_pair_exact(A, B, lambda t: name_key(t.label)), "key")
    if free_a and free_b:
        scored = []
        for i in free_a:
            sa = set(A[i].source_ids)
            for j in free_b:
                sb = set(B[j].source_ids)
                if sa and sb:
                    jac = len(sa & sb) / len(sa | sb)
                    if jac >= topic_overlap:
                        scored.append((jac, i, j))
        for jac, i, j in sorted(scored, reverse=True):
            take([(i, j)], f"sources {jac:.2f}")
    return pairs


def diff_stores(a: AnchorStore, b: AnchorStore, *, a_label: str = "A", b_label: str = "B",
                event_cosine: float = 0.8, topic_overlap: float = 0.3) -> StoreDiff:
    """Anchors added, removed and changed per module from ``a`` to ``b``."""
    notes = []
    ca, cb = a.anchors.conversation_id, b.anchors.conversation_id
    if ca and cb and ca != cb:
        notes.append(f"the stores hold different conversations ({ca!r} and {cb!r}); few anchors will pair")
    same_model = (a.anchors.built_with.embedding_model == b.anchors.built_with.embedding_model
                  and a.anchors.built_with.embedding_dim == b.anchors.built_with.embedding_dim)
    modules = {}
    for module in MODULES:
        A, B = a.anchors.module(module), b.anchors.module(module)
        ea, eb = a.embeddings.get(module), b.embeddings.get(module)
        usable = same_model and ea is not None and eb is not None and ea.shape[0] == len(A) and eb.shape[0] == len(B)
        pairs = _match(module, A, B, ea if usable else None, eb if usable else None, event_cosine, topic_overlap)
        md = ModuleDiff(module)
        paired_a = {i for i, _, _ in pairs}
        paired_b = {j for _, j, _ in pairs}
        for i, j, how in sorted(pairs):
            changes = _changes(module, A[i], B[j])
            if changes:
                md.changed.append(Changed(_side(module, A[i]), _side(module, B[j]), changes, how))
            else:
                md.unchanged += 1
        md.removed = [_side(module, x) for i, x in enumerate(A) if i not in paired_a]
        md.added = [_side(module, x) for j, x in enumerate(B) if j not in paired_b]
        modules[module] = md
    if not same_model:
        notes.append("the stores use different embedding models: events pair by text and sources only")
    return StoreDiff(a_label, b_label, modules, notes=notes)


def compare_measures(a: AnchorStore, b: AnchorStore, dataset: str = "locomo", host: str = "dense",
                     embedder: Any = None, limit: int | None = None) -> list[dict[str, Any]]:
    """Per question category: coverage with Gravity, recall after expansion and temporal grounding of
    both stores (the same host, questions and budget), and B minus A."""
    conv = a.conversation or b.conversation
    questions = list(conv.questions) if conv is not None else []
    if not questions:
        raise GravityError("the conversation has no benchmark questions to measure with (build it from LoCoMo)")
    questions = questions[:limit] if limit else questions
    if embedder is None:
        info = a.anchors.built_with
        embedder = embedder_for(info.embedding_model, info.embedding_dim)
    rows = {}
    for label, store in (("a", a), ("b", b)):
        h = get_host(host, embedder=embedder) if host == "dense" else get_host(host)
        rows[label] = {r["category"]: r for r in summarize(measure_conversation(store, h, questions, dataset,
                                                                                 embedder=embedder))}
    out = []
    for cat, ra in rows["a"].items():
        rb = rows["b"].get(cat, {})
        row = {"category": cat, "n": ra["n"]}
        for key in ("coverage_host", "coverage_gravity", "recall_expanded", "temporal_grounding"):
            va, vb = ra.get(key), rb.get(key)
            row[f"{key}_a"], row[f"{key}_b"] = va, vb
            row[f"{key}_change"] = None if va is None or vb is None else vb - va
        out.append(row)
    return out


def compare_prompts(a: AnchorStore, b: AnchorStore, questions: list[str], embedder: Any = None,
                    variant: str = "full") -> list[dict[str, Any]]:
    """The anchor text each store injects for each question (the Gravity side of the answer prompt)."""
    if embedder is None:
        info = a.anchors.built_with
        embedder = embedder_for(info.embedding_model, info.embedding_dim)
    ga, gb = GravityQuery(a, embedder, variant), GravityQuery(b, embedder, variant)
    out = []
    for q in questions:
        ta, tb = ga.run(q).context.text, gb.run(q).context.text
        out.append({"question": q, "a": ta, "b": tb, "same": ta == tb})
    return out
