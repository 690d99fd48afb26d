"""The event timeline: one lane per person, topic lanes under them, on a real time axis.

Events without a resolved date cannot sit on a time axis; ``events_frame`` keeps them with
``resolved=False`` so the page lists them apart instead of guessing a position. A date far from the
session it was said in, or in another year when nobody said a year, is flagged (``suspicious``) and
still drawn: outside the default range it sits on the range's edge with its real date on hover.
Cause and follow-up links are drawn only when the cited utterances show the link (:func:`supported_links`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

import altair as alt
import pandas as pd

from ..anchors import AnchorSet
from ..conversation import Conversation
from ..datecheck import far_date_reason
from . import MODULE_COLORS, inline, unvalidated

# Distinct, colour-blind friendly hues for people (Tableau 10 without its grey).
PERSON_COLORS = ["#4E79A7", "#F28E2B", "#59A14F", "#E15759", "#B07AA1", "#76B7B2", "#EDC948", "#9C755F",
                 "#FF9DA7"]
NO_PERSON = "(no person named)"
FLAG_COLOR = "#D62728"
# Words by which a speaker ties one happening to another; a link needs one in its evidence.
_LINK_CUE = re.compile(r"\b(because|therefore|as a result|that'?s why|which is why|led to|leads? to|afterwards|"
                       r"after (?:that|this|which)|due to|thanks to|ended up|caused|made me|now that|and then)\b"
                       r"|,\s*so\b|\bso (?:i|we|he|she|they|now)\b", re.IGNORECASE)
_KIND = {"before": "on or before", "after": "on or after"}
_SPANS = {"week", "month", "season", "year", "range"}


def people(anchors: AnchorSet, speakers: Iterable[str] = ()) -> dict[str, str]:
    """Every way a person is named (lower case) -> the lane's name: the speakers and the person entities."""
    lanes: dict[str, str] = {}
    for s in speakers:
        lanes.setdefault(s.lower(), s)
    for e in anchors.entities:
        if (e.type or "").lower() == "person":
            name = lanes.get(e.name.lower(), e.name)
            for n in [e.name, *e.aliases]:
                lanes.setdefault(n.lower(), name)
    return lanes


# A person other than a speaker gets a lane of their own from this many events on: a name said once ("Gryffindor",
# typed person by the extractor) would take a lane's height for one point, which the speaker's lane shows anyway.
MIN_LANE_EVENTS = 2
OTHER_PEOPLE = "(other people)"


def events_frame(anchors: AnchorSet, speakers: Iterable[str] = ()) -> pd.DataFrame:
    """One row per event: what, who (``people``: the lanes it is drawn in), the expression as said, the resolved
    range, the date it was resolved against, and why the date looks wrong (``suspicious``). Lanes are the speakers
    and the entities typed person with at least ``MIN_LANE_EVENTS`` events."""
    topics = {t.id: t.label for t in anchors.topics}
    speakers = list(speakers)
    lanes = people(anchors, speakers)
    named = [list(dict.fromkeys(lanes[p.lower()] for p in v.participants if p.lower() in lanes))
             for v in anchors.events]
    counts: dict[str, int] = {}
    for who in named:
        for p in who:
            counts[p] = counts.get(p, 0) + 1
    keep = set(speakers) | {p for p, n in counts.items() if n >= MIN_LANE_EVENTS}
    rows = []
    for v, all_who in zip(anchors.events, named):
        who = [p for p in all_who if p in keep] or ([OTHER_PEOPLE] if all_who else [])
        rows.append({
            "id": v.id, "what": v.what, "participants": ", ".join(v.participants), "people": ", ".join(who),
            "participant": who[0] if who else (v.participants[0] if v.participants else NO_PERSON),
            "when_text": v.when_text, "date_start": v.date_start, "date_end": v.date_end or v.date_start,
            "granularity": v.granularity, "session_id": v.session_id, "session_date": v.session_date or "",
            "topic_id": v.topic_id or "", "topic": topics.get(v.topic_id or "", "(no topic)"), "where": v.where,
            "causes": ", ".join(v.causes), "follows": ", ".join(v.follows), "sources": ", ".join(v.source_ids),
        })
    cols = ["id", "what", "participants", "people", "participant", "when_text", "date_start", "date_end",
            "granularity", "session_id", "session_date", "topic_id", "topic", "where", "causes", "follows", "sources"]
    frame = pd.DataFrame(rows, columns=cols)
    # One vectorised parse per column: per-event parsing took over a second at 260 events.
    for col in ("date_start", "date_end"):
        frame[col] = pd.to_datetime(frame[col], errors="coerce", utc=True, format="ISO8601")
    frame["resolved"] = (frame["date_start"].notna() & (frame["granularity"] != "unknown")).astype(bool)
    # The Review queue's rule (datecheck.py): both pages flag the same dates.
    frame["suspicious"] = [far_date_reason(v.date_start, v.date_end, v.session_date, v.when_text) if ok else ""
                           for v, ok in zip(anchors.events, frame["resolved"])]
    return frame.sort_values(["date_start", "id"], na_position="last").reset_index(drop=True)


def search_mask(events: pd.DataFrame, query: str) -> pd.Series:
    """Events whose text, people, expression as said, place or topic hold ``query`` (case-insensitive)."""
    q = query.strip().lower()
    if not q:
        return pd.Series(True, index=events.index)
    text = (events["what"] + " " + events["participants"] + " " + events["when_text"] + " " + events["where"] + " "
            + events["topic"]).str.lower()
    return text.str.contains(q, regex=False)


def best_match(events: pd.DataFrame, query: str) -> str | None:
    """The id of the first event whose own words (what, people, as said, place) hold ``query``, else None: a
    search that also matches a topic's title should open the event that says it."""
    q = query.strip().lower()
    if not q or events.empty:
        return None
    own = (events["what"] + " " + events["participants"] + " " + events["when_text"] + " " + events["where"]).str.lower()
    hits = events.loc[own.str.contains(q, regex=False), "id"]
    return str(hits.iloc[0]) if len(hits) else None


def mentions_mask(events: pd.DataFrame, names: Iterable[str]) -> pd.Series:
    """Events that name any of ``names`` (an entity and its aliases) as participant, place or in their text."""
    names = [n.lower() for n in names if n.strip()]
    if not names:
        return pd.Series(True, index=events.index)
    text = (events["participants"] + " | " + events["where"] + " | " + events["what"]).str.lower()
    pattern = "|".join(r"\b" + re.escape(n) + r"\b" for n in names)
    return text.str.contains(pattern, regex=True)


def supported_links(anchors: AnchorSet, conversation: Conversation | None) -> pd.DataFrame:
    """Cause and follow-up links whose evidence shows them: the two events cite the same utterance or two
    neighbouring utterances of one session, and that text ties them ("because", "so", "after", "then" ...).
    Links without such evidence are left out: most are only the order in which things were said."""
    cols = ["kind", "from", "to", "evidence_ids", "evidence"]
    if conversation is None:
        return pd.DataFrame([], columns=cols)
    place = {u.id: (s.id, i) for s in conversation.sessions for i, u in enumerate(s.utterances)}
    text = {u.id: u.text for s in conversation.sessions for u in s.utterances}
    by_id = {v.id: v for v in anchors.events}
    rows = []
    for v in anchors.events:
        for kind, others in (("causes", v.causes), ("follows", v.follows)):
            for other_id in others:
                other = by_id.get(other_id)
                if other is None:
                    continue
                ids = _evidence(v.source_ids, other.source_ids, place)
                quote = " … ".join(text[i] for i in ids)
                if ids and _LINK_CUE.search(quote):
                    rows.append({"kind": kind, "from": v.id, "to": other_id, "evidence_ids": ", ".join(ids),
                                 "evidence": quote})
    return pd.DataFrame(rows, columns=cols)


def _evidence(a: list[str], b: list[str], place: dict[str, tuple[str, int]]) -> list[str]:
    shared = [s for s in a if s in b and s in place]
    if shared:
        return shared[:1]
    for x in a:
        for y in b:
            if x in place and y in place and place[x][0] == place[y][0] and abs(place[x][1] - place[y][1]) == 1:
                return sorted([x, y], key=lambda i: place[i][1])
    return []


def conversation_span(events: pd.DataFrame, margin_days: int = 45) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The sessions' own time range plus a margin: the default view, so that one "back in 2019" event
    does not squeeze months of conversation into a few pixels."""
    times = pd.to_datetime(events["session_date"], errors="coerce", utc=True).dropna()
    if times.empty:
        return None
    margin = pd.Timedelta(days=margin_days)
    return times.min().tz_localize(None).normalize() - margin, times.max().tz_localize(None).normalize() + margin


def lanes_frame(events: pd.DataFrame, domain: tuple[pd.Timestamp, pd.Timestamp] | None = None,
                match: pd.Series | None = None) -> pd.DataFrame:
    """The marks of the person lanes: one row per (lane, day, kind) with how many events and a hover list.
    An event of two people is in both lanes. Outside ``domain`` a row sits on the domain's edge."""
    data = events[events["resolved"]]
    matched = pd.Series(True, index=data.index) if match is None else match.reindex(data.index).fillna(False)
    groups: dict[tuple, list[dict]] = {}
    # Plain records and a dict: a pandas groupby with per-group frames took seconds at 260 events.
    for rec, hit in zip(data.to_dict("records"), matched.astype(bool)):
        rec["match"] = hit
        day = (rec["date_end"] if rec["granularity"] == "before" else rec["date_start"]).tz_localize(None).normalize()
        kind = _KIND.get(rec["granularity"], "on")
        for lane in rec["people"].split(", ") if rec["people"] else [NO_PERSON]:
            groups.setdefault((lane, day, kind), []).append(rec)
    rows = []
    for (lane, day, kind), recs in groups.items():
        x, outside = _place(day, domain)
        items = [r["what"][:90] + (f' ("{r["when_text"]}")' if r["when_text"] else "") for r in recs]
        flags = [r["suspicious"] for r in recs if r["suspicious"]]
        ends = [r["date_end"].tz_localize(None) for r in recs if r["granularity"] in _SPANS]
        cited = [len([i for i in r["sources"].split(", ") if i]) for r in recs]
        top = recs[max(range(len(recs)), key=lambda i: cited[i])]
        rows.append({
            "lane": lane, "x": x, "date": day.date().isoformat(), "kind": kind, "n": len(recs),
            "weight": sum(cited) + len(recs),
            "events": "  •  ".join(items[:5]) + (f"  •  … and {len(items) - 5} more" if len(items) > 5 else ""),
            "label": _short(top["what"], LABEL_CHARS) + (f" +{len(recs) - 1}" if len(recs) > 1 else ""),
            "ids": ", ".join(r["id"] for r in recs), "match": any(r["match"] for r in recs),
            "flag": flags[0] if flags else "", "outside": outside,
            "x_end": _place(max(ends), domain)[0] if ends else pd.NaT,
        })
    return pd.DataFrame(rows, columns=["lane", "x", "date", "kind", "n", "weight", "events", "label", "ids", "match",
                                       "flag", "outside", "x_end"])


def _place(day: pd.Timestamp, domain: tuple[pd.Timestamp, pd.Timestamp] | None) -> tuple[pd.Timestamp, str]:
    if domain is None or pd.isna(day):
        return day, ""
    if day < domain[0]:
        return domain[0], f"{day.date().isoformat()} (before the range shown)"
    if day > domain[1]:
        return domain[1], f"{day.date().isoformat()} (after the range shown)"
    return day, ""


def _short(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


# Above this many events the page starts on the density view (a strip per person and week).
DENSITY_ABOVE = 400
# Above this many topics their lanes start collapsed into one: sixteen lanes of squares took 70% of the height.
COLLAPSE_TOPICS_ABOVE = 6


def topic_lanes_frame(anchors: AnchorSet, titles: dict[str, str] | None = None,
                      domain: tuple[pd.Timestamp, pd.Timestamp] | None = None, *,
                      collapsed: bool = False) -> pd.DataFrame:
    """The marks of the topic lanes: one row per session in which a topic was discussed; ``collapsed``: one lane
    for every topic, a row per session with its mentions summed and the topics named."""
    titles = titles or {}
    rows = []
    for t in anchors.topics:
        for step in t.sessions:
            when = _day(step.date)
            if when is None:
                continue
            x, outside = _place(when, domain)
            title = titles.get(t.id, t.label)
            rows.append({"lane": "Topic: " + title, "x": x, "date": when.date().isoformat(),
                         "mentions": max(step.mentions, len(step.source_ids)),
                         "state": (title + ": " if collapsed else "") + step.state[:200],
                         "session_id": step.session_id, "outside": outside})
    cols = ["lane", "x", "date", "mentions", "state", "session_id", "outside"]
    frame = pd.DataFrame(rows, columns=cols)
    if not collapsed or frame.empty:
        return frame
    lane = f"Topics ({len(anchors.topics)})"
    grouped = []
    for (x, date, session_id, outside), grp in frame.groupby(["x", "date", "session_id", "outside"], sort=True):
        ranked = grp.sort_values("mentions", ascending=False, kind="stable")
        grouped.append({"lane": lane, "x": x, "date": date, "mentions": int(grp["mentions"].sum()),
                        "state": "  •  ".join(_short(st, 90) for st in ranked["state"].head(6))
                                 + (f"  •  … and {len(grp) - 6} more" if len(grp) > 6 else ""),
                        "session_id": session_id, "outside": outside})
    return pd.DataFrame(grouped, columns=cols)


def _day(text: str | None) -> pd.Timestamp | None:
    try:
        return pd.Timestamp(text[:10]) if text else None
    except ValueError:
        return None


def person_colors(lanes: list[str]) -> dict[str, str]:
    """A distinct colour per person lane, in lane order (the grey of 'no person' last)."""
    out = {}
    for lane in lanes:
        out[lane] = "#9AA5B1" if lane == NO_PERSON else PERSON_COLORS[len(out) % len(PERSON_COLORS)]
    return out


def lane_order(marks: pd.DataFrame, topic_marks: pd.DataFrame | None = None) -> list[str]:
    """People with the most events first, 'no person' and 'other people' last, then the topic lanes."""
    people_lanes = list(marks.groupby("lane")["n"].sum().sort_values(ascending=False, kind="stable").index)
    for tail in (OTHER_PEOPLE, NO_PERSON):
        if tail in people_lanes:
            people_lanes.remove(tail)
            people_lanes.append(tail)
    return people_lanes + (list(dict.fromkeys(topic_marks["lane"])) if topic_marks is not None else [])


PERSON_LANE_PX = 110
TOPIC_LANE_PX = 20
# Sub-rows of a person lane, as shares of its height from its centre line: busy days go above and below.
_SUB_ROWS = (0.0, -0.2, 0.2, -0.38, 0.38)


def lane_layout(lanes: list[str]) -> tuple[dict[str, tuple[float, float]], float]:
    """Each lane's centre and height in pixels from the top, and the chart's height. Person lanes get the height:
    together at least as much as all topic lanes (a topic lane is one row of squares)."""
    person = [lane for lane in lanes if not _is_topic(lane)]
    topics = [lane for lane in lanes if _is_topic(lane)]
    person_px = max(PERSON_LANE_PX, -(-TOPIC_LANE_PX * len(topics) // max(1, len(person)))) if person else 0
    out: dict[str, tuple[float, float]] = {}
    top = 0.0
    for lane in lanes:
        h = TOPIC_LANE_PX if _is_topic(lane) else person_px
        out[lane] = (round(top + h / 2), h)
        top += h
    return out, max(top, 60.0)


def _is_topic(lane: str) -> bool:
    return lane.startswith("Topic: ") or lane.startswith("Topics (")


def _stack(frame: pd.DataFrame, layout: dict[str, tuple[float, float]], gap: pd.Timedelta) -> list[float]:
    """A y position (pixels) per row of ``frame``: its lane's centre plus the first sub-row free at that date."""
    y = [0.0] * len(frame)
    for lane, grp in frame.reset_index(drop=True).groupby("lane", sort=False):
        centre, h = layout[lane]
        last: list[pd.Timestamp | None] = [None] * len(_SUB_ROWS)
        for i, x in sorted(zip(grp.index, grp["x"]), key=lambda t: t[1]):
            free = [r for r, at in enumerate(last) if at is None or x - at >= gap]
            row = free[0] if free else min(range(len(last)), key=lambda r: last[r])
            last[row] = x
            y[i] = centre + _SUB_ROWS[row] * h
    return y


LABEL_CHARS = 20
LABEL_FONT = 11
# Labels are placed for a plot this wide (pixels) or wider: a wider chart only spreads them further apart.
LABEL_PLOT_WIDTH = 760
_CHAR_PX = 6.6  # the widest average advance of an 11 px sans-serif label, to size labels without a browser
# Spots beside a point (dx, dy in pixels, alignment), nearest first; rows 16 px apart, a label's box being 15 px
# high in the browser (11 px text).
_LABEL_SPOTS = ((12, 0, "left"), (-12, 0, "right"), (8, -16, "left"), (-8, -16, "right"), (8, 16, "left"),
                (-8, 16, "right"), (0, -20, "center"), (0, 20, "center"), (6, -32, "left"), (-6, -32, "right"),
                (6, 32, "left"), (-6, 32, "right"), (0, -48, "center"), (0, 48, "center"))
_LABEL_BOX_PX = 16


def place_labels(marks: pd.DataFrame, domain: tuple[pd.Timestamp, pd.Timestamp] | None,
                 width: float = LABEL_PLOT_WIDTH) -> pd.DataFrame:
    """The marks whose label fits: the most-cited first, each beside its point (right, left, or a little above or
    below) where its box meets no label placed before and stays inside the plot. ``marks`` carry ``y`` in pixels;
    the rows returned add ``dx``, ``dy``, ``align`` and the box (``bx0 by0 bx1 by1``)."""
    cols = list(marks.columns) + ["dx", "dy", "align", "bx0", "by0", "bx1", "by1"]
    if marks.empty:
        return pd.DataFrame([], columns=cols)
    lo, hi = (domain if domain else (marks["x"].min(), marks["x"].max()))
    span = max((hi - lo).total_seconds(), 1.0)
    boxes: list[tuple[float, float, float, float]] = []
    rows = []
    for rec in marks.sort_values(["weight", "n", "date"], ascending=[False, False, True], kind="stable").to_dict(
            "records"):
        px = (rec["x"] - lo).total_seconds() / span * width
        h = _LABEL_BOX_PX
        # The label as made, else cut to a few words: a busy week still names its most-cited events.
        for text in dict.fromkeys([rec["label"], _short(rec["label"].split(" +")[0], 12)]):
            w = len(text) * _CHAR_PX
            spot = next(((dx, dy, align, box) for dx, dy, align in _LABEL_SPOTS
                         for box in [_box(px, rec["y"], dx, dy, align, w, h)]
                         if box[0] >= 0 and box[2] <= width and box[1] >= 0 and all(
                             box[2] <= b[0] or box[0] >= b[2] or box[3] <= b[1] or box[1] >= b[3] for b in boxes)),
                        None)
            if spot is not None:
                dx, dy, align, box = spot
                boxes.append(box)
                rows.append({**rec, "label": text, "dx": dx, "dy": dy, "align": align, "bx0": box[0], "by0": box[1],
                             "bx1": box[2], "by1": box[3]})
                break
    return pd.DataFrame(rows, columns=cols)


def _box(px: float, py: float, dx: float, dy: float, align: str, w: float, h: float) -> tuple[float, ...]:
    x0 = px + dx if align == "left" else px + dx - w if align == "right" else px - w / 2
    return (x0, py + dy - h / 2, x0 + w, py + dy + h / 2)


@unvalidated
def timeline_chart(marks: pd.DataFrame, topic_marks: pd.DataFrame | None = None, *,
                   links: pd.DataFrame | None = None, domain: tuple[pd.Timestamp, pd.Timestamp] | None = None,
                   labels: bool = True, searching: bool = False, density: bool = False) -> alt.LayerChart:
    """Person lanes (one colour each, most of the height), then topic lanes; a point per day (size: how many events;
    hover: the list), a bar for ranges, triangles for 'on or before/after', a red ring on suspicious dates, a dashed
    line for each link with evidence (``links``: :func:`supported_links`). Points closer than about a hundredth of
    the range take the lane's next sub-row. ``labels``: the labels that fit (:func:`place_labels`); ``density``:
    a strip per person and week, darker with more events, instead of points. Drag to pan, scroll to zoom the time
    axis; a click selects a point (selection ``event``, field ``ids``: the ids of the events on that day).
    Drawn as SVG so a label's box can be measured in the browser."""
    lanes = lane_order(marks, topic_marks)
    person_lanes = [lane for lane in lanes if not _is_topic(lane)]
    colors = person_colors(person_lanes)
    layout, height = lane_layout(lanes)
    times = pd.concat([marks["x"], topic_marks["x"] if topic_marks is not None else marks["x"]]).dropna()
    span = (domain[1] - domain[0]) if domain else (times.max() - times.min() if len(times) else pd.Timedelta(0))
    gap = max(span / 110, pd.Timedelta(days=1))
    marks = marks.assign(y=_stack(marks, layout, gap))
    if topic_marks is not None:
        topic_marks = topic_marks.assign(y=[float(layout[lane][0]) for lane in topic_marks["lane"]])
    scale = alt.Scale(domain=[domain[0].isoformat(), domain[1].isoformat()]) if domain else alt.Undefined
    x = alt.X("x:T", title=None, scale=scale, axis=alt.Axis(format="%b %Y", labelFontSize=12, grid=True,
                                                              gridColor="#eef0f3", labelOverlap=True,
                                                              tickCount={"interval": "month", "step": 1}))
    # Lanes on a pixel axis (top = 0) so person lanes can be tall and topic lanes thin; the axis labels are the lane
    # names at their centres (JSON-quoted data, looked up by the centre's value).
    centres = {str(int(c)): lane for lane, (c, _) in layout.items()}
    y_scale = alt.Scale(domain=[0, height], reverse=True, nice=False, zero=False)
    y_axis = alt.Axis(values=[int(c) for c, _ in layout.values()], labelExpr=f"{json.dumps(centres)}['' + datum.value]",
                      labelFontSize=12, labelLimit=240, grid=False, ticks=False, domain=False)
    y = alt.Y("y:Q", title=None, scale=y_scale, axis=y_axis)
    zoom = alt.selection_interval(bind="scales", encodings=["x"], name="zoom")
    color = alt.Color("lane:N", title="person", scale=alt.Scale(domain=person_lanes,
                                                                range=[colors[p] for p in person_lanes]),
                      legend=None)
    opacity = alt.condition("datum.match", alt.value(0.9), alt.value(0.15)) if searching else alt.value(0.85)
    tooltip = [alt.Tooltip("lane:N", title="person"), alt.Tooltip("date:N"), alt.Tooltip("kind:N", title="date is"),
               alt.Tooltip("n:Q", title="events"), alt.Tooltip("events:N", title="what"),
               alt.Tooltip("flag:N", title="check the date"), alt.Tooltip("outside:N", title="actual date"),
               alt.Tooltip("ids:N", title="ids")]
    pick = alt.selection_point(name="event", fields=["ids"], on="click", toggle=False)
    layers = []
    # Lane bands: a faint background per person lane shows where one lane ends and the next begins.
    bands = pd.DataFrame([{"lane": lane, "y0": c - h / 2, "y1": c + h / 2} for lane, (c, h) in layout.items()
                          if not _is_topic(lane)][1::2], columns=["lane", "y0", "y1"])
    if not bands.empty:
        layers.append(alt.Chart(inline(bands)).mark_rect(color="#f5f7fa").encode(
            y=alt.Y("y0:Q", title=None, scale=y_scale, axis=y_axis), y2="y1:Q"))
    if density:
        layers.append(_density_layer(marks, layout, x, color, pick, zoom))
    else:
        layers += _point_layers(marks, links, x, y, color, opacity, tooltip, zoom, pick)
    # Only labels that fit are drawn; a search labels what it found (where it fits) even when labels are off.
    wanted = marks if labels and not searching else marks[marks["match"]] if searching else None
    layers += _label_layers(wanted, domain, span, x, y)
    if topic_marks is not None and not topic_marks.empty:
        layers.append(_topic_layer(topic_marks, x, y))
    # Fit the width only: the plot is then exactly ``height`` pixels high, so the y axis is in pixels and the labels
    # placed by pixel keep their distances (a "fit" autosize squeezed the plot to make room for the legend).
    chart = alt.layer(*layers).properties(height=height, autosize=alt.AutoSizeParams(type="fit-x",
                                                                                     contains="padding"))
    chart.usermeta = {"embedOptions": {"renderer": "svg"}}
    return chart


def _point_layers(marks: pd.DataFrame, links: pd.DataFrame | None, x, y, color, opacity, tooltip, zoom, pick) -> list:
    """The events drawn one by one: link lines, range rules, and a point per day with its flags."""
    layers = []
    link_marks = _link_marks(links, marks) if links is not None else None
    if link_marks is not None and not link_marks.empty:
        layers.append(alt.Chart(inline(link_marks)).mark_rule(strokeDash=[4, 3], color="#52606d",
                                                              strokeWidth=1.5).encode(
            x=x, x2="x2:T", y=y, y2="y2:Q",
            tooltip=[alt.Tooltip("kind:N", title="link"), alt.Tooltip("evidence:N"),
                     alt.Tooltip("evidence_ids:N", title="utterances")]))
    spans = marks.dropna(subset=["x_end"])
    if not spans.empty:
        # A thick rule, not a bar: on a numeric y a bar would grow from the axis' zero.
        layers.append(alt.Chart(inline(spans)).mark_rule(strokeWidth=6, strokeCap="round", opacity=0.35).encode(
            x=x, x2="x_end:T", y=y, color=color, tooltip=tooltip))
    # A red ring flags a date to check; a dark ring a point pinned to the edge of the range shown.
    ring = {"condition": [{"test": "datum.flag != ''", "value": FLAG_COLOR},
                          {"test": "datum.outside != ''", "value": "#1f2933"}], "value": "white"}
    ring_width = {"condition": [{"test": "datum.flag != ''", "value": 3},
                                {"test": "datum.outside != ''", "value": 2}], "value": 0}
    layers.append(alt.Chart(inline(marks)).mark_point(filled=True).encode(
        x=x, y=y, color=color, opacity=opacity, stroke=ring, strokeWidth=ring_width,
        size=alt.Size("n:Q", scale=alt.Scale(range=[60, 360]), legend=None),
        shape=alt.Shape("kind:N", title="date is",
                        scale=alt.Scale(domain=["on", "on or before", "on or after"],
                                        range=["circle", "triangle-left", "triangle-right"]),
                        legend=alt.Legend(orient="top", symbolFillColor="#7b8794", symbolStrokeWidth=0)),
        tooltip=tooltip).add_params(zoom, pick))
    return layers


def _label_layers(wanted: pd.DataFrame | None, domain, span, x, y) -> list:
    """The labels of ``wanted`` that fit (:func:`place_labels`), a layer per alignment."""
    layers = []
    placed = place_labels(wanted, domain) if wanted is not None and not wanted.empty else None
    if placed is not None and not placed.empty:
        # One dataset, a layer per alignment (a mark's align cannot vary by datum): the offsets are folded into the
        # data, y exactly (the axis is in pixels), x as the time a pixel spans at the placing width.
        per_px = (domain[1] - domain[0] if domain else span) / LABEL_PLOT_WIDTH
        data = placed[["label", "x", "y", "dx", "dy", "align"]].assign(
            x=placed["x"] + per_px * placed["dx"], y=placed["y"] + placed["dy"])
        labelled_data = inline(data.drop(columns=["dx", "dy"]))
        for align in ("left", "right", "center"):
            if (data["align"] == align).any():
                layers.append(alt.Chart(labelled_data).transform_filter(alt.datum.align == align).mark_text(
                    align=align, baseline="middle", fontSize=LABEL_FONT, color="#323f4b").encode(
                    x=x, y=y, text="label:N"))
    return layers


def _topic_layer(topic_marks: pd.DataFrame, x, y):
    """A square per topic and session, sized by how often the topic came up."""
    return alt.Chart(inline(topic_marks)).mark_square(color=MODULE_COLORS["topics"], opacity=0.75).encode(
        x=x, y=y, size=alt.Size("mentions:Q", scale=alt.Scale(range=[30, 200]), legend=None),
        tooltip=[alt.Tooltip("lane:N", title="topic"), alt.Tooltip("date:N"), alt.Tooltip("session_id:N"),
                 alt.Tooltip("mentions:Q"), alt.Tooltip("state:N", title="in this session"),
                 alt.Tooltip("outside:N", title="actual date")])


def _density_layer(marks: pd.DataFrame, layout: dict[str, tuple[float, float]], x, color, pick, zoom):
    """A strip per (person, week), as tall as the lane, more opaque with more events: hundreds of points per
    lane read as one smear, a week's count does not."""
    if marks.empty:
        weeks = marks.assign(week=[], week_end=[], n=[], y0=[], y1=[])
    else:
        week = marks["x"].dt.to_period("W").dt.start_time
        weeks = (marks.assign(week=week).groupby(["lane", "week"], sort=True)
                 .agg(n=("n", "sum"), ids=("ids", ", ".join), events=("events", lambda e: "  •  ".join(e)[:400]))
                 .reset_index())
        weeks["week_end"] = weeks["week"] + pd.Timedelta(days=7)
        weeks["y0"] = [layout[lane][0] - 0.42 * layout[lane][1] for lane in weeks["lane"]]
        weeks["y1"] = [layout[lane][0] + 0.42 * layout[lane][1] for lane in weeks["lane"]]
    return alt.Chart(inline(weeks)).mark_rect().encode(
        x=x, x2="week_end:T", y=alt.Y("y0:Q"), y2="y1:Q", color=color,
        opacity=alt.Opacity("n:Q", scale=alt.Scale(range=[0.25, 1]), legend=None),
        tooltip=[alt.Tooltip("lane:N", title="person"), alt.Tooltip("week:T", title="week of", format="%d %b %Y"),
                 alt.Tooltip("n:Q", title="events"), alt.Tooltip("events:N", title="what")]).add_params(zoom, pick)


def lane_names(spec: dict) -> list[str]:
    """The lanes of a :func:`timeline_chart` spec, top to bottom, as its y axis labels them."""
    axis = next(layer["encoding"]["y"]["axis"] for layer in spec["layer"] if layer["encoding"]["y"].get("axis"))
    centres = json.loads(axis["labelExpr"].removesuffix("['' + datum.value]"))
    return [centres[k] for k in sorted(centres, key=int)]


def clicked_events(selection) -> list[str]:
    """The event ids of a clicked timeline point (:func:`timeline_chart`), or []."""
    picked = (selection or {}).get("event") or []
    if isinstance(picked, list) and picked and isinstance(picked[0], dict) and picked[0].get("ids"):
        return str(picked[0]["ids"]).split(", ")
    return []


def _link_marks(links: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """Segments from one linked event's point to the other's (``marks`` with their ``y``)."""
    at: dict[str, tuple] = {}
    for row in marks.itertuples():
        for eid in row.ids.split(", "):
            at.setdefault(eid, (row.x, row.y))
    rows = []
    for link in links.to_dict("records"):
        if link["from"] in at and link["to"] in at:
            (x, y), (x2, y2) = at[link["from"]], at[link["to"]]
            rows.append({"kind": link["kind"], "x": x, "x2": x2, "y": y, "y2": y2,
                         "evidence": _short(link["evidence"], 160), "evidence_ids": link["evidence_ids"]})
    return pd.DataFrame(rows, columns=["kind", "x", "x2", "y", "y2", "evidence", "evidence_ids"])
