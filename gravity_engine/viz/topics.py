"""Topic arcs: readable topic titles, a clickable topic × session heat map, and one topic's arc."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import altair as alt
import pandas as pd

from ..anchors import AnchorSet, Topic
from ..conversation import Conversation
from . import MODULE_COLORS, inline

TOPIC_COLOR = MODULE_COLORS["topics"]
_DROP_POS = {"DET", "PRON", "PART", "PUNCT", "NUM", "SYM", "CCONJ", "ADP", "SPACE", "AUX", "INTJ"}
# Words that say nothing about a topic (the extractor writes "Priya and others").
_VAGUE = {"other", "others", "thing", "things", "stuff", "lot", "lots", "way", "time", "one", "kind", "bit", "bunch",
          "day", "week", "month", "year", "today", "yesterday"}


def session_order(anchors: AnchorSet, conversation: Conversation | None) -> list[str]:
    """Session ids in conversation order (from the conversation when known, else as the arcs list them)."""
    if conversation is not None and conversation.sessions:
        return [s.id for s in conversation.sessions]
    seen: list[str] = []
    for t in anchors.topics:
        for s in t.sessions:
            if s.session_id not in seen:
                seen.append(s.session_id)
    return seen


def topic_titles(anchors: AnchorSet) -> dict[str, str]:
    """A short readable title per topic id, from the noun phrases its own key facts and session states
    repeat (no model call): "X-ray module" rather than "chest rays, license, radiology"."""
    if not anchors.topics:
        return {}
    from ..extract.classic.nlp import parse

    people = {n.lower() for e in anchors.entities if (e.type or "").lower() == "person"
              for n in [e.name, *e.aliases] for n in [n, *n.split()]}
    texts = [[*(f.text for f in t.key_facts), *(s.state for s in t.sessions), t.summary] for t in anchors.topics]
    docs = iter(parse([x for group in texts for x in group]))
    titles = {}
    for t, group in zip(anchors.topics, texts):
        titles[t.id] = title_from_phrases(_phrases([next(docs) for _ in group], people), t.keywords) or t.label
    return titles


def _phrases(docs: list, people: set[str]) -> list[list[tuple[str, str]]]:
    """Per text, its noun phrases as (surface, lemma) token lists, without determiners, pronouns and
    numbers, and without phrases that are only a person's name (people are not what a topic is about)."""
    out = []
    for doc in docs:
        found = []
        for chunk in doc.noun_chunks:
            toks = [(tok.text_with_ws, tok.lemma_.lower()) for tok in chunk
                    if tok.pos_ not in _DROP_POS and not tok.like_num and tok.ent_type_ not in {"DATE", "TIME"}
                    and tok.lemma_.lower() not in _VAGUE and tok.text not in {"'s", "’s"}]
            # "John's gaming pals" is about gaming pals; a phrase that is only a name is about nobody's topic.
            toks = [(t, lem) for t, lem in toks if t.strip().lower() not in people]
            if toks:
                found.append(toks)
        out.append(found)
    return out


def title_from_phrases(per_text: list[list[list[tuple[str, str]]]], keywords: list[str]) -> str:
    """The best-supported phrase (and a second, distinct one when nearly as strong), capitalised.

    A phrase scores by how many of the topic's texts use each of its words, doubled for the topic's
    keywords, over the square root of its length: repeated, on-topic, short.
    """
    kw = {w for k in keywords for w in k.lower().split()}
    df = Counter(lemma for phrases in per_text for lemma in {lem for p in phrases for _, lem in p})
    forms: dict[tuple[str, ...], Counter] = {}
    for phrases in per_text:
        for p in phrases:
            key = tuple(lem for _, lem in p)
            forms.setdefault(key, Counter())["".join(s for s, _ in p).strip()] += 1
    scored = []
    for key, surfaces in forms.items():
        if len(key) > 4:
            continue
        weight = sum(df[lem] * (2 if lem in kw else 1) for lem in key) / math.sqrt(len(key))
        scored.append((weight * (1 + 0.25 * sum(surfaces.values())), key, surfaces.most_common(1)[0][0]))
    scored.sort(key=lambda s: (-s[0], len(s[2]), s[2]))
    if not scored or scored[0][0] < 2:
        return ""
    best_score, best_key, best = scored[0]
    title = best
    for score, key, surface in scored[1:4]:
        if score >= 0.75 * best_score and not set(key) & set(best_key):
            title = f"{best} and {surface}"
            break
    return title[0].upper() + title[1:]


def arcs_frame(anchors: AnchorSet, conversation: Conversation | None = None,
               titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (topic, session) step of an arc: mentions, date and the state summary."""
    order = {s: i for i, s in enumerate(session_order(anchors, conversation))}
    titles = titles or {}
    rows = []
    for t in anchors.topics:
        for step in t.sessions:
            rows.append({"topic_id": t.id, "topic": titles.get(t.id, t.label), "session_id": step.session_id,
                         "session_index": order.get(step.session_id, len(order)), "date": (step.date or "")[:10],
                         "mentions": max(step.mentions, len(step.source_ids)), "state": step.state,
                         "status": t.status})
    frame = pd.DataFrame(rows, columns=["topic_id", "topic", "session_id", "session_index", "date", "mentions",
                                        "state", "status"])
    return frame.sort_values(["topic", "session_index"]).reset_index(drop=True)


def heatmap_chart(arcs: pd.DataFrame, sessions: list[str], height_per_topic: int = 28,
                  selected: str | None = None) -> alt.Chart:
    """Topic × session heat map; colour is the number of mentions in that session. Clicking a cell selects
    it (selection ``cell``, fields ``topic_id`` and ``session_id``); the selected topic's row is outlined."""
    topics = list(dict.fromkeys(arcs.sort_values("session_index")["topic"]))
    data = arcs.assign(focus=arcs["topic_id"] == selected, state=arcs["state"].str.slice(0, 200))
    cell = alt.selection_point(name="cell", fields=["topic_id", "session_id"], on="click", toggle=False)
    # A fixed step per row: a plain pixel height let Streamlit squeeze the rows and drop labels.
    return alt.Chart(inline(data)).mark_rect(cornerRadius=2, cursor="pointer").encode(
        x=alt.X("session_id:N", sort=sessions, title="session", axis=alt.Axis(labelAngle=-40, labelFontSize=12)),
        y=alt.Y("topic:N", sort=topics, title=None, axis=alt.Axis(labelLimit=300, labelFontSize=13)),
        color=alt.Color("mentions:Q", scale=alt.Scale(scheme="greens"), title="mentions"),
        stroke=alt.condition("datum.focus", alt.value("#1f2933"), alt.value("white")),
        strokeWidth=alt.condition("datum.focus", alt.value(2), alt.value(1)),
        tooltip=[alt.Tooltip("topic:N"), alt.Tooltip("session_id:N", title="session"), alt.Tooltip("date:N"),
                 alt.Tooltip("mentions:Q"), alt.Tooltip("state:N", title="in this session")],
    ).add_params(cell).properties(height=alt.Step(height_per_topic))


def clicked_cell(selection: Mapping | None) -> tuple[str, str] | None:
    """The (topic_id, session_id) of a clicked heat-map cell, or None."""
    picked = (selection or {}).get("cell") or []
    if isinstance(picked, list) and picked and isinstance(picked[0], Mapping) and picked[0].get("topic_id"):
        return str(picked[0]["topic_id"]), str(picked[0].get("session_id", ""))
    return None


def arc_chart(topic: Topic, sessions: list[str], focus_session: str | None = None) -> alt.LayerChart:
    """One topic across the whole conversation: mentions per session (zero where it was not discussed),
    each discussed session a point whose hover shows what the topic looked like then."""
    steps = {s.session_id: s for s in topic.sessions}
    rows = [{"session_id": sid, "order": i, "mentions": max(steps[sid].mentions, len(steps[sid].source_ids))
             if sid in steps else 0, "date": (steps[sid].date or "")[:10] if sid in steps else "",
             "state": steps[sid].state[:200] if sid in steps else "", "discussed": sid in steps,
             "focus": sid == focus_session} for i, sid in enumerate(sessions)]
    data = pd.DataFrame(rows, columns=["session_id", "order", "mentions", "date", "state", "discussed", "focus"])
    x = alt.X("session_id:N", sort=sessions, title="session", axis=alt.Axis(labelAngle=-40, labelFontSize=12))
    y = alt.Y("mentions:Q", title="mentions", axis=alt.Axis(tickMinStep=1))
    line = alt.Chart(inline(data)).mark_area(line={"color": TOPIC_COLOR}, color=TOPIC_COLOR, opacity=0.18,
                                     interpolate="monotone").encode(x=x, y=y)
    points = alt.Chart(inline(data[data["discussed"]])).mark_circle(color=TOPIC_COLOR, opacity=1).encode(
        x=x, y=y, size=alt.condition("datum.focus", alt.value(320), alt.value(110)),
        stroke=alt.condition("datum.focus", alt.value("#1f2933"), alt.value(TOPIC_COLOR)),
        tooltip=[alt.Tooltip("session_id:N", title="session"), alt.Tooltip("date:N"), alt.Tooltip("mentions:Q"),
                 alt.Tooltip("state:N", title="in this session")])
    return alt.layer(line, points).properties(height=220)


def topic_totals(anchors: AnchorSet, titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    titles = titles or {}
    rows = [{"topic": titles.get(t.id, t.label), "sessions": len(t.sessions),
             "mentions": sum(s.mentions for s in t.sessions), "status": t.status,
             "keywords": ", ".join(t.keywords[:8]), "participants": ", ".join(t.participants)}
            for t in anchors.topics]
    return pd.DataFrame(rows, columns=["topic", "sessions", "mentions", "status", "keywords", "participants"])
