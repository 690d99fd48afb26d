"""The playground's reading of a query trace: what Gravity changed in the prompt, where each memory came
from, whether the host's best hit survived, and the lines that best support an answer.

Pure functions of the trace's JSON (``query/trace.py``), so the page only draws and tests need no
Streamlit. Every piece of conversation text is escaped before it becomes HTML.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..eval.coverage import context_covers
from ..prompts.base import escape_text
from ..text import content_tokens, normalize_token
from ..query.names import TITLE as NAMES_TITLE

MODULE_NAMES = {"entities": "entity", "events": "event", "topics": "topic"}


def _labels(trace: dict[str, Any]) -> dict[str, str]:
    return {c["anchor_id"]: c["label"] for mo in trace.get("modules", {}).values() for c in mo.get("candidates", [])}


def _key(memory: dict[str, Any]) -> tuple:
    return tuple(memory.get("utterance_ids") or ()) or (memory.get("text", ""),)


def memory_sources(trace: dict[str, Any]) -> dict[tuple, str]:
    """For each memory Gravity's context holds: the host's own rank, or the expansion query (and anchor) that
    brought it. Keyed by the memory's utterance ids (its text when it has none)."""
    labels = _labels(trace)
    lists = trace.get("host_results", [])
    out: dict[tuple, str] = {}
    for m in trace.get("merged", []):
        origins = m.get("from_lists") or [0]
        own = next((h for h in lists[:1] for x in h["memories"] if _key(x) == _key(m)), None)
        if 0 in origins and own is not None:
            rank = next(x["rank"] for x in own["memories"] if _key(x) == _key(m))
            out[_key(m)] = f"the host's own hit #{rank}"
            continue
        i = origins[0]
        if 0 < i < len(lists):
            h = lists[i]
            anchor = labels.get(h.get("anchor_id") or "", h.get("anchor_id") or "")
            kind = MODULE_NAMES.get(h.get("module") or "", h.get("module") or "")
            out[_key(m)] = f"expansion {i} “{h['query']}” (from the {kind} anchor “{anchor}”)"
    return out


def expansion_yield(trace: dict[str, Any]) -> dict[int, int]:
    """Per expansion (1-based, as in ``host_results``): how many memories of the fused list it brought that the
    host's own search for the question did not return."""
    out: dict[int, int] = {}
    for m in trace.get("merged", []):
        origins = m.get("from_lists") or [0]
        if 0 not in origins:
            out[origins[0]] = out.get(origins[0], 0) + 1
    return out


def top_hit_pushed_out(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The host's best hit when the context with Gravity no longer holds it, else None."""
    return next((m for m in trace.get("pushed_out", []) if m.get("rank") == 1), None)


def _match(line: str, needle: str) -> bool:
    # The prompt shows every "<" of conversation text as "‹" (prompts.base.escape_text): match it as shown.
    needle = needle.strip()
    return bool(needle) and (escape_text(needle) in line or needle in line)


def classify_prompt(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt with Gravity, line by line, against the host-only prompt. Each row: ``kind`` (same,
    extended, anchor, heading, expansion, added, removed), ``text``, ``why`` (which anchor or expansion
    brought it) and, for an extended line, ``base`` (the part both prompts share). Memories that fusion
    only reordered count as the same; the host's memories that Gravity's prompt lost are listed as
    removed where the memories end."""
    without = (trace.get("prompt_without") or {}).get("text", "").splitlines()
    with_ = (trace.get("prompt_with") or {}).get("text", "").splitlines()
    before, after = set(without), set(with_)
    labels = _labels(trace)
    anchor_lines = [ln for b in trace.get("blocks", []) for ln in b.get("lines", [])]
    titles = {b["title"] for b in trace.get("blocks", [])}
    sources = memory_sources(trace)
    merged = trace.get("merged", [])
    removed = [{"kind": "removed", "text": t, "why": "the host's memory, pushed out of the prompt with Gravity"}
               for t in without if t.strip() and t not in after and not any(w.startswith(t) for w in with_)]
    rows: list[dict[str, Any]] = []
    in_anchors = in_names = False
    for t in with_:
        if t.strip() == "</memories>":
            rows += removed
            removed = []
        in_anchors = (in_anchors or t.strip() == "<anchors>") and t.strip() != "</anchors>"
        in_names = in_anchors and (t.strip() == NAMES_TITLE or (in_names and not t.startswith("#")))
        if t in before:
            rows.append({"kind": "same", "text": t, "why": ""})
            continue
        base = next((w for w in without if w.strip() and t.startswith(w)), None)
        if base is not None:
            rows.append({"kind": "extended", "text": t, "base": base, "why": "instruction added by Gravity"})
            continue
        hit = next((ln for ln in anchor_lines if _match(t, ln["text"])), None)
        mem = next((m for m in merged if m.get("text") and _match(t, m["text"].splitlines()[0])), None)
        if hit is not None:
            score = "" if hit.get("score") is None else f" · line score {hit['score']:.2f}"
            slot = " · temporal slot" if hit.get("pinned") else ""
            rows.append({"kind": "anchor", "text": t,
                         "why": f"{labels.get(hit['anchor_id'], hit['anchor_id'])} ({hit['field']}){score}{slot}"})
        elif mem is not None:
            rows.append({"kind": "expansion", "text": t,
                         "why": sources.get(_key(mem), "fused from the expansion searches")})
        elif any(title in t for title in titles) or t.strip().startswith("<"):
            rows.append({"kind": "heading", "text": t, "why": ""})
        elif in_names and t.startswith("- "):
            rows.append({"kind": "anchor", "text": t, "why": "the full name the store knows for a first name in "
                                                             "this context (Full Names)"})
        elif in_anchors:  # a profile's or topic's own heading line ("- MedLLM (product)")
            rows.append({"kind": "heading", "text": t, "why": ""})
        else:
            rows.append({"kind": "added", "text": t, "why": "added by Gravity"})
    return rows + removed


_KIND_LABEL = {"anchor": "anchor", "expansion": "expansion", "removed": "pushed out", "added": "added",
               "extended": "added", "heading": "", "same": ""}


def prompt_diff_html(rows: list[dict[str, Any]], keep_same: int = 2) -> str:
    """The classified prompt as wrapped HTML: additions highlighted with why, removals struck through, runs of
    unchanged lines folded to their first and last ``keep_same`` lines."""
    out = ['<div class="gs-diff">']
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j]["kind"] == "same":
            j += 1
        run = rows[i:j]
        if len(run) > 2 * keep_same + 1:
            shown = run[:keep_same] + [None] + run[-keep_same:]
        else:
            shown = run
        for r in shown if run else []:
            if r is None:
                out.append(f'<div class="gs-diff-fold">… {len(run) - 2 * keep_same} unchanged lines …</div>')
            else:
                out.append(f'<div class="gs-diff-line gs-diff-same">{html.escape(r["text"]) or "&nbsp;"}</div>')
        if j < len(rows):
            r = rows[j]
            tag = _KIND_LABEL.get(r["kind"], "")
            why = f'<span class="gs-diff-why">{html.escape(r["why"])}</span>' if r["why"] else ""
            pill = f'<span class="gs-diff-tag">{tag}</span>' if tag else ""
            body = html.escape(r["text"]) or "&nbsp;"
            if r["kind"] == "removed":  # only the memory is struck through, not the note on why
                body = f'<span class="gs-diff-strike">{body}</span>'
            if r["kind"] == "extended":  # only the words Gravity appended are highlighted
                body = (f'{html.escape(r["base"])}<ins class="gs-diff-ins">{html.escape(r["text"][len(r["base"]):])}'
                        "</ins>")
            out.append(f'<div class="gs-diff-line gs-diff-{r["kind"]}">{pill}{body}{why}</div>')
            j += 1
        i = j
    out.append("</div>")
    return "\n".join(out)


def diff_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many anchor lines, memories brought by expansions and host memories pushed out."""
    kinds = [r["kind"] for r in rows]
    return {k: kinds.count(k) for k in ("anchor", "expansion", "removed")}


def context_lines(prompt_text: str) -> list[str]:
    """The lines of a prompt that hold context (memories and anchor lines), not instructions or headings."""
    return [ln for ln in prompt_text.splitlines() if ln.lstrip().startswith(("- ", "* ", "• "))]


def evidence(prompt_text: str, question: str, gold: str | None = None, n: int = 3) -> list[dict[str, Any]]:
    """The context lines that best support an answer: a line that holds the gold answer first (by the
    coverage rule), then by how many of the question's content words it shares. Each row: ``text``,
    ``holds_gold``, ``shared`` (the words), ``score``."""
    words = {normalize_token(w) for w in content_tokens(question)}
    rows = []
    for i, line in enumerate(context_lines(prompt_text)):
        shared = sorted(words & {normalize_token(w) for w in content_tokens(line)})
        holds = bool(gold) and context_covers(str(gold), line) is True
        if shared or holds:
            rows.append({"text": line, "holds_gold": holds, "shared": shared, "score": len(shared), "order": i})
    rows.sort(key=lambda r: (not r["holds_gold"], -r["score"], r["order"]))
    return rows[:n]


def evidence_html(rows: list[dict[str, Any]]) -> str:
    """Evidence rows with the shared question words marked; a line holding the gold answer is flagged."""
    if not rows:
        return '<div class="gs-evidence gs-evidence-none">No context line shares a word with the question.</div>'
    out = ['<div class="gs-evidence">']
    for r in rows:
        text = html.escape(r["text"].lstrip("-*• ").strip())
        for w in sorted(r["shared"], key=len, reverse=True):
            text = re.sub(rf"(?<![\w&])({re.escape(html.escape(w))}\w*)", r"<mark>\1</mark>", text, flags=re.I)
        flag = '<span class="gs-evidence-gold">holds the gold answer</span>' if r["holds_gold"] else ""
        out.append(f'<div class="gs-evidence-line">{flag}{text}</div>')
    out.append("</div>")
    return "\n".join(out)


def coverage_badge_html(covered: bool | None, label: str) -> str:
    """A large badge: does this context hold the gold answer (the shared coverage rule)?"""
    if covered is None:
        return f'<div class="gs-cover gs-cover-na">{html.escape(label)}: no gold answer to check</div>'
    state = "yes" if covered else "no"
    text = "gold answer in context" if covered else "gold answer not in context"
    return (f'<div class="gs-cover gs-cover-{state}"><span class="gs-cover-mark">{"✓" if covered else "✗"}</span>'
            f'{html.escape(label)}: {text}</div>')


LINE_SCORE = "line score"


def line_score_help(trace: dict[str, Any]) -> str:
    """What an anchor line's score is, with this trace's weight: not a cosine, so it can pass 1."""
    w = (trace.get("config") or {}).get("line_lexical", 0.0) or 0.0
    return (f"cosine of the line with the question + {w:g} × the share of the question's words it holds "
            f"(idf-weighted), so up to {1 + w:g}" if w else "cosine of the line with the question")


def _dates(anchors, conversation) -> tuple[dict[str, str], dict[str, str]]:
    """Anchor id -> its date as shown (an event's resolved date, else as said); utterance id -> its session's day."""
    by_anchor: dict[str, str] = {}
    if anchors is not None:
        for v in anchors.events:
            by_anchor[v.id] = v.date_label()
    by_utt: dict[str, str] = {}
    if conversation is not None:
        for sess in conversation.sessions:
            for u in sess.utterances:
                by_utt[u.id] = (u.timestamp or sess.timestamp or "")[:10]
    return by_anchor, by_utt


def _anchor_names(anchors) -> dict[str, str]:
    if anchors is None:
        return {}
    names = {e.id: e.name for e in anchors.entities}
    names.update({v.id: v.what for v in anchors.events})
    names.update({t.id: t.label for t in anchors.topics})
    return names


def what_changed(trace: dict[str, Any], anchors=None, conversation=None) -> dict[str, list[dict[str, Any]]]:
    """What Gravity put in the prompt and what it pushed out, one row per line, for a compact list: ``added``
    (anchor lines, best score first: ``anchor``, ``kind``, ``text``, ``score``, ``date``, ``pinned``), ``expansion``
    (memories brought by expansion queries: ``text``, ``why``, ``date``) and ``pushed`` (the host's memories the
    context with Gravity lost: ``text``, ``rank``, ``date``). Every row has ``source_ids``. ``anchors`` and
    ``conversation`` (optional) give dates and names the trace does not hold."""
    labels = {**_anchor_names(anchors), **_labels(trace)}
    anchor_dates, utt_dates = _dates(anchors, conversation)

    def day(ids: list[str], fallback: str | None = None) -> str:
        return next((utt_dates[i] for i in ids if utt_dates.get(i)), None) or (fallback or "")[:10]

    added = []
    for block in trace.get("blocks", []):
        kind = MODULE_NAMES.get(block.get("module", ""), block.get("module", ""))
        for ln in block.get("lines", []):
            ids = list(ln.get("source_ids") or [])
            added.append({"kind": kind, "anchor": labels.get(ln["anchor_id"], ln["anchor_id"]),
                          "anchor_id": ln["anchor_id"], "text": ln["text"], "score": ln.get("score"),
                          "pinned": bool(ln.get("pinned")),
                          "date": anchor_dates.get(ln["anchor_id"]) or day(ids), "source_ids": ids})
    added.sort(key=lambda r: (not r["pinned"], -(r["score"] if r["score"] is not None else -1)))
    sources = memory_sources(trace)
    expansion = [{"text": m["text"], "why": sources.get(_key(m), "an expansion search"),
                  "date": day(list(m.get("utterance_ids") or []), m.get("timestamp")),
                  "source_ids": list(m.get("utterance_ids") or [])}
                 for m in trace.get("merged", []) if 0 not in (m.get("from_lists") or [0])]
    pushed = [{"text": m["text"], "rank": m.get("rank"), "date": day(list(m.get("utterance_ids") or []),
                                                                    m.get("timestamp")),
               "source_ids": list(m.get("utterance_ids") or [])} for m in trace.get("pushed_out", [])]
    return {"added": added, "expansion": expansion, "pushed": pushed}


_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
_DATE = re.compile(rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}} (?:{_MONTHS})\.?,? \d{{4}}\b|"
                   rf"\b(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b|\b(?:{_MONTHS}) \d{{4}}\b")


def _context(prompt_text: str) -> str:
    return "\n".join(context_lines(prompt_text))


def differences(trace: dict[str, Any], names: list[str] | None = None) -> dict[str, list[str]]:
    """Without a gold answer, what the context with Gravity holds that the host's alone does not: ``dates``
    (written dates), ``people`` (of ``names``, e.g. the store's person entities) and ``facts`` (context lines)."""
    before = _context((trace.get("prompt_without") or {}).get("text", ""))
    after = _context((trace.get("prompt_with") or {}).get("text", ""))
    old_lines = set(before.splitlines())
    facts = [ln for ln in after.splitlines() if ln not in old_lines]
    dates = list(dict.fromkeys(d for d in _DATE.findall(after) if d not in before))
    people = [n for n in dict.fromkeys(names or []) if n and re.search(rf"\b{re.escape(n)}\b", after)
              and not re.search(rf"\b{re.escape(n)}\b", before)]
    return {"facts": facts, "dates": dates, "people": people}


def differences_html(diff: dict[str, list[str]]) -> str:
    """The verdict line for a question without a gold answer: what Gravity's context holds that the other lacks."""
    if not (diff["facts"] or diff["dates"] or diff["people"]):
        return '<div class="gs-cover gs-cover-na">Same facts in both contexts</div>'
    parts = [f"{len(diff['facts'])} new context line{'s' if len(diff['facts']) != 1 else ''}"]
    if diff["dates"]:
        parts.append("dates " + ", ".join(diff["dates"][:4]) + (" …" if len(diff["dates"]) > 4 else ""))
    if diff["people"]:
        parts.append("people " + ", ".join(diff["people"][:4]) + (" …" if len(diff["people"]) > 4 else ""))
    # Styled here: the shared stylesheet's badges are for a yes or a no, this one says what differs.
    style = "background:#eaf2fb;color:#1d4f91;border:2px solid #4C78A8;font-size:0.95rem;font-weight:600"
    return (f'<div class="gs-cover gs-cover-diff" style="{style}"><span class="gs-cover-mark">+</span>'
            f'With Gravity: {html.escape("; ".join(parts))}</div>')
