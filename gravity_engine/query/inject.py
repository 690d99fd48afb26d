"""Step 3: the selected anchors as three prompt blocks, and the final answer prompt with or without them.

``render_context`` is pure: anchors in, text blocks and their token counts out. Every anchor shows
its id, dates (ISO and spelled out, so "7 May 2023" in a gold answer and "2023-05-07" meet) and the
utterance ids it cites. ``answer_messages`` fills the shared answer prompt (``prompts/answer.py``),
which puts memories and anchors in tagged data sections and says memories are the primary source
of truth and anchors supplementary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..anchors import Entity, Event, Topic
from .text import human_date

BLOCK_TITLES = {"topics": "Topic Summaries", "entities": "Entity Profiles", "events": "Event Records"}
BLOCK_ORDER = ("topics", "entities", "events")
_MAX_SOURCES = 6
_MAX_FIELDS = 6  # attributes / relations shown per entity: a profile should not crowd out the memories


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """Token count via the engine's tokenizer (cached per text); whitespace words when it cannot be loaded."""
    if not text:
        return 0
    from ..llm.tokens import count_tokens as _count

    try:
        return _count(text)
    except Exception:  # tokenizer files unreadable: a rough count beats failing the query
        return len(text.split())


def _sources(ids: list[str]) -> str:
    if not ids:
        return "no source"
    shown = ", ".join(ids[:_MAX_SOURCES])
    return shown + (f" +{len(ids) - _MAX_SOURCES} more" if len(ids) > _MAX_SOURCES else "")


def _date_text(iso_start: str | None, iso_end: str | None, granularity: str) -> str:
    if not iso_start:
        return ""
    text = iso_start if not iso_end or iso_end == iso_start else f"{iso_start}..{iso_end}"
    spelled = human_date(iso_start, granularity)
    return f"{text} ({spelled})" if spelled and spelled != iso_start else text


def render_entity(e: Entity) -> str:
    head = f"- {e.name} ({e.type}) [{e.id}; sources: {_sources(e.source_ids)}]"
    lines = [head]
    if e.aliases:
        lines.append(f"  aka: {', '.join(e.aliases)}")
    if e.description:
        lines.append(f"  {_clip(e.description, 40)}")
    for a in e.attributes[:_MAX_FIELDS]:
        lines.append(f"  {a.key}: {_clip(a.value, 20)} ({_sources(a.source_ids)})")
    for r in e.relations[:_MAX_FIELDS]:
        lines.append(f"  {r.predicate} {r.target} ({_sources(r.source_ids)})")
    if e.first_seen or e.last_seen:
        lines.append(f"  mentioned from {e.first_seen or '?'} to {e.last_seen or '?'}")
    return "\n".join(lines)


def render_event(v: Event) -> str:
    when = _date_text(v.date_start, v.date_end, v.granularity) or "date unknown"
    if v.when_text:
        said = f'said "{v.when_text}"'
        if v.session_date:
            said += f" on {human_date(v.session_date)}"
        when += f"; {said}"
    who = ", ".join(v.participants)
    text = f"- {when} | {who + ': ' if who else ''}{v.what}"
    if v.where:
        text += f" | where: {v.where}"
    return text + f" [{v.id}; sources: {_sources(v.source_ids)}]"


def render_topic(t: Topic) -> str:
    dates = [s.date for s in t.sessions if s.date]
    span = f"{dates[0][:10]}..{dates[-1][:10]}" if dates else ""
    head = f"- {t.label} ({t.status}{', ' + span if span else ''}) [{t.id}; sources: {_sources(t.source_ids)}]"
    lines = [head]
    if t.participants:
        lines.append(f"  participants: {', '.join(t.participants)}")
    if t.summary:
        lines.append(f"  {_clip(t.summary, 50)}")
    for f in t.key_facts[:3]:
        lines.append(f"  fact: {_clip(f.text, 30)} ({_sources(f.source_ids)})")
    for s in t.sessions[-3:]:
        if s.state:
            lines.append(f"  {s.date[:10] if s.date else s.session_id}: {_clip(s.state, 20)}")
    return "\n".join(lines)


def _clip(text: str, words: int) -> str:
    """At most ``words`` words: a topic arc is a summary, and its full text would crowd out the memories."""
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


_RENDER = {"entities": render_entity, "events": render_event, "topics": render_topic}


@dataclass
class InjectedContext:
    """The anchor blocks as they enter the prompt; ``text`` is empty when nothing was selected."""

    blocks: dict[str, str] = field(default_factory=dict)  # module -> block text (title included)
    tokens: dict[str, int] = field(default_factory=dict)
    anchor_ids: dict[str, list[str]] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(self.blocks[m] for m in (*BLOCK_ORDER, "summaries") if self.blocks.get(m))

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


def _event_key(v: Event) -> tuple:
    return (v.date_start is None, v.date_start or "", v.id)


def render_context(selected: dict[str, list], count=count_tokens) -> InjectedContext:
    """Three blocks in topic, entity, event order; events chronological so the model reads a timeline."""
    ctx = InjectedContext()
    for module in BLOCK_ORDER:
        anchors = list(selected.get(module) or [])
        if not anchors:
            continue
        if module == "events":
            anchors.sort(key=_event_key)
        parts = [_RENDER[module](a) for a in anchors]
        title = f"## {BLOCK_TITLES[module]}"
        ctx.blocks[module] = title + "\n" + "\n".join(parts)
        # Both tokenizers split at whitespace first, so per-line counts add up to the block's; each
        # anchor's line is counted once per process (the cache), which keeps injection under a millisecond.
        ctx.tokens[module] = count(title) + sum(count(p) for p in parts)
        ctx.anchor_ids[module] = [a.id for a in anchors]
    return ctx


def fit_context(selected: dict[str, list], cap: int, count=count_tokens) -> InjectedContext:
    """``render_context`` within ``cap`` tokens: drop the lowest-ranked anchor of the largest block until it fits."""
    current = {m: list(v or []) for m, v in selected.items()}
    ctx = render_context(current, count)
    while ctx.total_tokens > cap and any(current.values()):
        biggest = max(ctx.tokens, key=lambda m: ctx.tokens[m])
        current[biggest].pop()
        ctx = render_context(current, count)
    return ctx


def render_summaries(summaries: list[tuple[str, str]], count=count_tokens) -> InjectedContext:
    """+Sum: (id, text) summaries in the same slot, under one heading."""
    ctx = InjectedContext()
    if summaries:
        block = "## Conversation Summaries\n" + "\n".join(f"- {text} [{sid}]" for sid, text in summaries)
        ctx.blocks["summaries"] = block
        ctx.tokens["summaries"] = count(block)
        ctx.anchor_ids["summaries"] = [sid for sid, _ in summaries]
    return ctx


def answer_messages(question: str, memory_lines: list[str], context: InjectedContext | None = None,
                    question_date: str | None = None) -> list[dict[str, str]]:
    """The answer prompt (``prompts/answer.py``): memories first, the anchor blocks only when there are any."""
    from ..prompts.answer import PROMPT

    return PROMPT.render(answer_context(question, memory_lines, context, question_date))


def answer_context(question: str, memory_lines: list[str], context: InjectedContext | None = None,
                   question_date: str | None = None) -> dict:
    return {"question": question, "memories": memory_lines, "anchors": context.text if context else "",
            "question_date": question_date}


def prompt_text(messages: list[dict[str, str]]) -> str:
    """The messages as one readable text (for display, the trace and token counts)."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
