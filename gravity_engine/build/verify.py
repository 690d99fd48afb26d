"""Verification: check every anchor field against the utterances it cites.

Names and targets are checked as strings, dates by re-resolving the expression against the
session time, free-text fields by word overlap and then embedding similarity. Each anchor gets a
``checks`` list; unsupported fields are flagged, and can be dropped with ``drop_unsupported``.
This answers the method's main failure mode (the extractor conflating or inventing details).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..anchors import AnchorSet, FieldCheck
from ..merging import name_key
from ..conversation import Conversation, Utterance
from ..embed import Embedder
from ..places import LOCATED_IN, SOURCE
from ..timeparse import SPELLED_DATE, find_time_expressions, parse_datetime, resolve_time_expression

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the and or but of to in on at for with from by is are was were be been being it its this that these those "
    "i me my we our you your he him his she her they them their as so very just really also too not no yes do did does "
    "has have had will would can could should about into over than then there here what when where who how which "
    "going go went get got".split()
)


@dataclass
class VerifyConfig:
    overlap_min: float = 0.6  # share of a claim's content words found in its sources
    similarity_min: float = 0.45  # cosine of claim vs best cited utterance (MiniLM scale)


@dataclass
class _Claim:
    anchor: object
    field: str
    kind: str  # "name" | "text" | "date"
    text: str
    source_ids: list[str]
    extra: dict = field(default_factory=dict)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def _overlap(claim: str, sources: list[Utterance]) -> float:
    # A resolved date written into a fact ("on 7 May 2023" for "yesterday") is not a word of the
    # source; the event records' date checks cover it.
    words = _content_words(SPELLED_DATE.sub(" ", claim))
    if not words:
        return 1.0
    found = set()
    for u in sources:
        found |= _content_words(u.display_text() + " " + u.speaker)
    return len(words & found) / len(words)


def _claims(anchors: AnchorSet) -> list[_Claim]:
    claims: list[_Claim] = []
    for e in anchors.entities:
        claims.append(_Claim(e, "name", "name", e.name, e.source_ids, {"aliases": e.aliases}))
        for i, a in enumerate(e.attributes):
            if a.key == LOCATED_IN:  # GeoNames' knowledge, not the conversation's words: the place must be named
                claims.append(_Claim(e, f"attributes[{i}]", "gazetteer", e.name, a.source_ids,
                                     {"region": a.value, "aliases": e.aliases}))
                continue
            claims.append(_Claim(e, f"attributes[{i}]", "text", a.value, a.source_ids, {"full": f"{e.name} {a.key} {a.value}"}))
        for i, r in enumerate(e.relations):
            claims.append(_Claim(e, f"relations[{i}]", "name", r.target, r.source_ids, {"full": f"{e.name} {r.predicate} {r.target}"}))
    for v in anchors.events:
        claims.append(_Claim(v, "what", "text", v.what, v.source_ids, {"full": v.what}))
        if v.date_start:
            claims.append(_Claim(v, "date", "date", v.when_text, v.source_ids))
    for t in anchors.topics:
        for i, f in enumerate(t.key_facts):
            claims.append(_Claim(t, f"key_facts[{i}]", "text", f.text, f.source_ids or t.source_ids, {"full": f.text}))
        if t.summary:
            claims.append(_Claim(t, "summary", "text", t.summary, t.source_ids, {"full": t.summary}))
    return claims


_YOU = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b", re.IGNORECASE)


def _check_name(claim: _Claim, sources: list[Utterance], listeners: dict[str, str] | None = None) -> FieldCheck:
    names = [claim.text, *claim.extra.get("aliases", [])]
    keys = [name_key(n) for n in names if name_key(n)]
    for u in sources:
        hay = name_key(u.display_text() + " " + u.speaker)
        if any(re.search(rf"(^|\s){re.escape(k)}(\s|$)", hay) for k in keys):
            return FieldCheck(field=claim.field, supported=True, score=1.0, method="string")
        # a relation to the one spoken to: "you have been such a good friend to me" names its target as "you"
        listener = (listeners or {}).get(u.id)
        if listener and name_key(listener) in keys and _YOU.search(u.display_text()):
            return FieldCheck(field=claim.field, supported=True, score=1.0, method="string",
                              note=f"said to {listener}")
    return FieldCheck(field=claim.field, supported=False, score=0.0, method="string",
                      note=f"{claim.text!r} does not occur in its sources")


def _check_date(claim: _Claim, sources: list[Utterance]) -> FieldCheck:
    event = claim.anchor
    when = (event.when_text or "").strip()
    if not when:
        # A date with no expression: it is the session's own date, or nothing supports it.
        ok = bool(event.session_date) and event.session_date[:10] == event.date_start
        return FieldCheck(field="date", supported=ok, score=float(ok), method="date",
                          note="" if ok else "date given without an expression in the source")
    said = any(when.lower() in u.display_text().lower() for u in sources)
    if not said:
        return FieldCheck(field="date", supported=False, score=0.0, method="date",
                          note=f"{when!r} is not in the cited utterances")

    reference = parse_datetime(event.session_date) if event.session_date else None
    if reference is None:
        return FieldCheck(field="date", supported=True, score=0.5, method="date",
                          note="expression found in source; no session time to re-resolve it against")
    # Re-resolve inside the source sentence, so its tense ("will", "went") is read as the extractor read it.
    spans = [sp for u in sources for sp in find_time_expressions(u.display_text(), reference)
             if when.lower() in sp.text.lower() or sp.text.lower() in when.lower()]
    if not spans:
        one = resolve_time_expression(when, reference)
        spans = [one] if one else []
    if not spans:
        return FieldCheck(field="date", supported=True, score=0.5, method="date",
                          note="expression found in source; could not re-resolve it")
    ok = any(sp.start.isoformat() == event.date_start for sp in spans)
    return FieldCheck(field="date", supported=ok, score=float(ok), method="date",
                      note="" if ok else f"{when!r} resolves to {spans[0].start.isoformat()}, anchor says {event.date_start}")


def verify_anchors(anchors: AnchorSet, conversation: Conversation, embedder: Embedder | None = None,
                   config: VerifyConfig | None = None, drop_unsupported: bool = False) -> dict:
    """Fill each anchor's ``checks`` and return a summary (fields, supported, share, per module)."""
    config = config or VerifyConfig()
    utts = conversation.utterance_index()
    listeners = conversation.listeners()
    claims = _claims(anchors)
    for anchor in (*anchors.entities, *anchors.events, *anchors.topics):
        anchor.checks = []
    results: list[tuple[_Claim, FieldCheck | None]] = []
    pending: list[tuple[int, _Claim, list[Utterance]]] = []
    for claim in claims:
        sources = [utts[s] for s in claim.source_ids if s in utts]
        if not sources:
            results.append((claim, FieldCheck(field=claim.field, supported=False, score=0.0, method="missing-source",
                                              note="cites no existing utterance")))
        elif claim.kind == "name":
            said_to = listeners if claim.field.startswith("relations[") else None
            check = _check_name(claim, sources, said_to)
            if not check.supported and "full" in claim.extra:
                pending.append((len(results), claim, sources))
                results.append((claim, None))
            else:
                results.append((claim, check))
        elif claim.kind == "date":
            results.append((claim, _check_date(claim, sources)))
        elif claim.kind == "gazetteer":  # the place's name, checked like any name ("Bath" is not in "bathroom")
            check = _check_name(claim, sources)
            results.append((claim, check.model_copy(update={"method": "gazetteer", "note": (
                f"{SOURCE}: {claim.text} is in {claim.extra['region']}" if check.supported else check.note)})))
        else:
            ratio = _overlap(claim.text, sources)
            if ratio >= config.overlap_min:
                results.append((claim, FieldCheck(field=claim.field, supported=True, score=round(ratio, 3), method="string")))
            else:
                pending.append((len(results), claim, sources))
                results.append((claim, None))
    if pending:
        _embedding_checks(pending, results, embedder, config)
    for claim, check in results:
        claim.anchor.checks.append(check)
    summary = summarize(anchors)  # before any drop: the share describes what the extractor wrote
    if drop_unsupported:
        summary["dropped"] = drop_unsupported_fields(anchors)
    return summary


def _embedding_checks(pending, results, embedder: Embedder | None, config: VerifyConfig) -> None:
    if embedder is None:
        for i, claim, _ in pending:
            results[i] = (claim, FieldCheck(field=claim.field, supported=False, score=0.0, method="string",
                                            note="words not found in sources (no embedder for a semantic check)"))
        return
    claim_vecs = embedder.encode([c.extra.get("full", c.text) for _, c, _ in pending])
    source_texts = list(dict.fromkeys(u.display_text() for _, _, srcs in pending for u in srcs))
    source_vecs = embedder.encode(source_texts)
    row = {t: j for j, t in enumerate(source_texts)}
    for n, (i, claim, sources) in enumerate(pending):
        idx = [row[u.display_text()] for u in sources]
        score = float(np.max(source_vecs[idx] @ claim_vecs[n]))
        ok = score >= config.similarity_min
        results[i] = (claim, FieldCheck(field=claim.field, supported=ok, score=round(score, 3), method="embedding",
                                        note="" if ok else f"similarity {score:.2f} < {config.similarity_min}"))


def _keep_indexed(items: list, checks: list[FieldCheck], name: str) -> tuple[list, list[FieldCheck], int]:
    """Drop the items whose ``name[i]`` check failed; renumber the surviving items' checks."""
    bad = {c.field for c in checks if not c.supported and c.field.startswith(f"{name}[")}
    new_index: dict[str, str] = {}
    kept = []
    for i, item in enumerate(items):
        if f"{name}[{i}]" not in bad:
            new_index[f"{name}[{i}]"] = f"{name}[{len(kept)}]"
            kept.append(item)
    remapped = [c.model_copy(update={"field": new_index[c.field]}) if c.field in new_index else c
                for c in checks if c.field not in bad]
    return kept, remapped, len(items) - len(kept)


def drop_unsupported_fields(anchors: AnchorSet) -> dict[str, int]:
    """Remove what verification did not support: attributes, relations and key facts, event dates,
    and events whose description is unsupported (links to them are removed too). Returns counts."""
    dropped = {"attributes": 0, "relations": 0, "key_facts": 0, "event_dates": 0, "events": 0}
    for e in anchors.entities:
        e.attributes, e.checks, n = _keep_indexed(e.attributes, e.checks, "attributes")
        dropped["attributes"] += n
        e.relations, e.checks, n = _keep_indexed(e.relations, e.checks, "relations")
        dropped["relations"] += n
        e.checks = [c for c in e.checks if c.supported]
    for v in anchors.events:
        if any(c.field == "date" and not c.supported for c in v.checks):
            v.date_start = v.date_end = None
            v.granularity = "unknown"
            dropped["event_dates"] += 1
        v.checks = [c for c in v.checks if c.supported]
    before = len(anchors.events)
    anchors.events = [v for v in anchors.events if any(c.field == "what" for c in v.checks)]
    dropped["events"] = before - len(anchors.events)
    alive = {v.id for v in anchors.events}
    for v in anchors.events:
        v.follows = [x for x in v.follows if x in alive]
        v.causes = [x for x in v.causes if x in alive]
    for t in anchors.topics:
        t.key_facts, t.checks, n = _keep_indexed(t.key_facts, t.checks, "key_facts")
        dropped["key_facts"] += n
        t.checks = [c for c in t.checks if c.supported]
    return dropped


def summarize(anchors: AnchorSet) -> dict:
    """Share of checked fields that their sources support, overall and per module and method."""
    out: dict = {"by_module": {}, "by_method": {}}
    total = supported = 0
    for module in ("entities", "events", "topics"):
        checks = [c for a in anchors.module(module) for c in a.checks]
        ok = sum(c.supported for c in checks)
        out["by_module"][module] = {"fields": len(checks), "supported": ok,
                                    "share": round(ok / len(checks), 4) if checks else None}
        for c in checks:
            m = out["by_method"].setdefault(c.method, {"fields": 0, "supported": 0})
            m["fields"] += 1
            m["supported"] += int(c.supported)
        total += len(checks)
        supported += ok
    out.update(fields=total, supported=supported, share=round(supported / total, 4) if total else None)
    return out
