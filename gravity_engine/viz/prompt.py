"""The playground's reading of a query trace: what Gravity changed in the prompt, where each memory came
from, whether the host's best hit survived, and the lines that best support an answer.

Pure functions of the trace's JSON (``query/trace.py``), so the page only draws and tests need no
Streamlit. Every piece of conversation text is escaped before it becomes HTML.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..measure import context_covers
from ..query.text import content_tokens, normalize_token
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
    return bool(needle) and needle.strip() in line


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
            score = "" if hit.get("score") is None else f" · cosine {hit['score']:.2f}"
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
