"""LLM-free measures of the query path, per question category.

* **evidence recall@k**: the share of a question's evidence utterances among the host's top-k
  memories, for the original query alone and after fusing in the expansion queries' results.
* **answer coverage**: a question is covered when every part of its gold answer occurs in the
  final context. Rule: the gold is split into parts on commas (not one between digits, "30,000"),
  semicolons, "and", "or", "vs"; gold and
  context are normalized the same way (lowercase, split on anything that is not a letter or digit,
  drop the articles a/an/the, drop a possessive or plain plural "s"); a part is present when its
  tokens occur as one contiguous run inside one context line (memory or anchor line). So
  "7 May 2023" is covered by "(7 May 2023)" but not by "17 May" plus a "2023" elsewhere. A part that
  is only a date ("7 May 2023", "August 15, 2023", "12 March", "in 2022", "the week before 9 June
  2023") is also present when one line names a date inside it, written any way ("2023-05-07",
  "May 7, 2023", "2 June 2023 to 8 June 2023"); a gold without a year matches any year, a line
  without a year never gives one; "on or before 8 May 2023" is a bound and "[8 May 2023, 13:56]" a
  memory's timestamp, neither a date by meaning (both still count word for word). Host alone
  and host + anchors get the SAME total token budget: with Gravity the anchor lines (at most
  ``anchor_share`` of it, packed best first) take part of the budget and the memories fill the rest
  (the fused top-k first, then the host's own ranking). ``additive`` is the method's mode instead:
  the same memories' budget on both sides and the anchors on top (``query/session.py``).
* **temporal grounding** (LoCoMo category 2): the share of questions whose gold date lies in the
  resolved date range of an injected event, counting only events whose range is at most 6 days
  wider than the gold period (a "2023" event does not ground "7 May 2023"); gold answers with no
  parseable date are left out and counted. The gold period is read as the coverage rule reads it
  ("the week before 9 June 2023" is 2..8 June, not 9 June). Each such question also gets the
  **stage** that lost it (``TEMPORAL_STAGES``, the first that fails): "no event" (no event of the
  store grounds it or cites its evidence), "wrong date" (an event cites the evidence, none grounds
  the gold), "not selected" (a grounding event is in the store, not among the selected events),
  "not packed" (selected, its line left out under the budget), or "grounded".

LoCoMo categories are printed by number and our name: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (reported apart: its gold is usually an adversarial answer or none).

Each row also carries times: the Gravity query path (query embedding, temporal detection, retrieval,
rerank, expansion, injection; host search excluded), the host's own search for the question at k,
and the host searches of the expansion queries. ``measure_hosts.py`` runs this over several hosts.
"""

from __future__ import annotations

import csv
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from ..conversation import Conversation, Question
from ..embed import Embedder
from ..errors import InputError
from ..hosts.base import Host, Memory
from ..loaders import load_conversations
from ..query.config import FULL, Budget, Mode, QueryConfig
from ..query.inject import InjectedContext
from ..query.pipeline import GravityQuery, GravityResult
from ..query.session import HostSession, run_question
from ..text import normalize_token
from ..store import AnchorStore, load_conversation_store
from ..timeparse import find_time_expressions
from .statistics import bootstrap_ci, category_order, paired_bootstrap_ci

LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
LONGMEMEVAL_TYPES = {"single-session-user": "SSU", "single-session-assistant": "SSA",
                     "single-session-preference": "SSP", "multi-session": "MS", "knowledge-update": "KU",
                     "temporal-reasoning": "TR"}
_SPLIT = re.compile(r"[^a-z0-9]+")
_ARTICLES = {"a", "an", "the"}

Progress = Callable[[int, int], None]


def answer_tokens(text: str) -> list[str]:
    """The coverage rule's tokens (see the module docstring)."""
    return [normalize_token(t) for t in _SPLIT.split(str(text).lower()) if t and t not in _ARTICLES]


_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"]
_MONTHS = {**{m: i for i, m in enumerate(_MONTH_NAMES, 1)}, **{m[:3]: i for i, m in enumerate(_MONTH_NAMES, 1)},
           "sept": 9}
_MON = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"
# A comma inside a written date ("August 15, 2023", "15 August, 2023", "February, 2023") does not split the gold.
_DATE_COMMA = re.compile(rf"\b({_MON}\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?|\d{{1,2}}(?:st|nd|rd|th)?\s*{_MON}),\s*(\d{{4}})\b",
                         re.I)


# Parts are joined by these; a comma between digits groups thousands ("30,000") and joins nothing.
_PART_SPLIT = re.compile(r"(?<!\d),|,(?!\d{3}(?!\d))|;|\band\b|\bor\b|\bvs\b\.?|\bversus\b", re.I)


def gold_parts(gold: str) -> list[str]:
    """The gold answer split on commas, semicolons, 'and', 'or' and 'vs', each part as normalized tokens."""
    parts = _PART_SPLIT.split(_DATE_COMMA.sub(r"\1 \2", str(gold)))
    return [" ".join(toks) for toks in (answer_tokens(p) for p in parts) if toks]


# Dates are read on the normalized token stream, so gold and context pass through the same normalizer.
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_DATE_FORMS = re.compile("|".join([
    r"\b(?P<iy>\d{4}) (?P<im>\d{1,2}) (?P<id>\d{1,2})\b",  # 2023-05-07
    rf"\b{_DAY.format('dd')} ?(?P<dm>{_MON})\b(?: (?P<dy>\d{{4}})\b)?",  # 7 May 2023, 12 March, 15June
    rf"\b(?P<md>{_MON}) {_DAY.format('mdd')}\b(?: (?P<mdy>\d{{4}})\b)?",  # May 7, 2023
    rf"\b(?P<mm>{_MON}) (?P<my>\d{{4}})\b",  # May 2023
    r"\b(?P<y>(?:19|20)\d\d)\b",  # 2023
]))
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_RELATIVE = re.compile(rf"^(?:on )?(?:(?:the|a) )?(?:(?P<n>two|three|2|3) )?(?P<unit>day|week|weekend|{'|'.join(_WEEKDAYS)}) "
                       r"(?P<dir>before|after|of) (?P<date>.+)$")
_COUNTS = {"two": 2, "three": 3, "2": 2, "3": 3}
_WEEK_OF_MONTH = re.compile(r"^(?:in |during )?(?P<which>first|last) week of (?P<month>.+)$")
_FILLER = {"on", "in", "of", "around", "about", "circa", "during", "by"}
_CLOCK = re.compile(r" \d{1,2} \d{2}\b")
_ANY_YEAR = 2000  # a leap year: "29 February" without a year still reads


@dataclass(frozen=True)
class _Span:
    start: date
    end: date
    has_year: bool
    bound: bool = False  # "on or before 8 May 2023": a limit, not the date itself


def _spans(text: str) -> list[tuple[_Span, int, int]]:
    """Calendar dates written in a normalized token stream, with their character offsets."""
    out = []
    for m in _DATE_FORMS.finditer(text):
        g = m.groupdict()
        try:
            if g["iy"]:
                d = date(int(g["iy"]), int(g["im"]), int(g["id"]))
                start, end, has_year = d, d, True
            elif g["dm"] or g["md"]:
                year = g["dy"] or g["mdy"]
                d = date(int(year) if year else _ANY_YEAR, _MONTHS[g["dm"] or g["md"]], int(g["dd"] or g["mdd"]))
                start, end, has_year = d, d, bool(year)
            elif g["mm"]:
                y, mo = int(g["my"]), _MONTHS[g["mm"]]
                start, end, has_year = date(y, mo, 1), date(y + mo // 12, mo % 12 + 1, 1) - timedelta(days=1), True
            else:
                start, end, has_year = date(int(g["y"]), 1, 1), date(int(g["y"]), 12, 31), True
        except ValueError:  # "31 February", month 13 of an ISO-looking triple
            continue
        bound = text[max(0, m.start() - 10):m.start()].endswith(("before ", "after "))
        # A date followed by a clock time is a memory's timestamp (when it was said), not an answer.
        bound = bound or bool(_CLOCK.match(text, m.end()))
        out.append((_Span(start, end, has_year, bound), m.start(), m.end()))
    return out


def _relative(unit: str, direction: str, d: date, n: int = 1) -> tuple[date, date] | None:
    """'the week before 9 June' -> 2..8 June; 'the weekend before', 'the sunday after', 'the day before';
    'two weekends before' the one before that; 'the week of 23 August' the Monday..Sunday holding it."""
    if direction == "of":
        if unit != "week" or n != 1:
            return None
        monday = d - timedelta(days=d.weekday())
        return monday, monday + timedelta(days=6)
    if n > 1:  # each further unit is one more week (or day) away
        start, end = _relative(unit, direction, d)
        shift = timedelta(days=(n - 1) * (1 if unit == "day" else 7) * (-1 if direction == "before" else 1))
        return start + shift, end + shift
    step = -1 if direction == "before" else 1
    if unit == "day":
        day = d + timedelta(days=step)
        return day, day
    if unit == "week":
        a, b = d + timedelta(days=step), d + timedelta(days=7 * step)
        return min(a, b), max(a, b)
    targets = {5, 6} if unit == "weekend" else {_WEEKDAYS.index(unit)}
    day = d + timedelta(days=step)
    while day.weekday() not in targets:
        day += timedelta(days=step)
    other = day + timedelta(days=step)  # a weekend is two days
    if unit == "weekend" and other.weekday() in targets:
        return min(day, other), max(day, other)
    return day, day


def _gold_date(part: str) -> _Span | None:
    """The period a gold part names when the part is nothing but a date (fillers aside), else None."""
    week = _WEEK_OF_MONTH.match(part)
    if week:  # "first week of May 2023": the month's first (last) seven days
        month = _gold_date(week.group("month"))
        if month is None or month.end.day < 28 or month.start.day != 1:
            return None
        if week.group("which") == "first":
            return _Span(month.start, month.start + timedelta(days=6), month.has_year)
        return _Span(month.end - timedelta(days=6), month.end, month.has_year)
    rel = _RELATIVE.match(part)
    inner = rel.group("date") if rel else part
    found = _spans(inner)
    if len(found) != 1:
        return None
    span, a, b = found[0]
    if any(t not in _FILLER for t in (inner[:a] + " " + inner[b:]).split()):
        return None
    if not rel:
        return span
    if span.start != span.end:
        return None
    period = _relative(rel.group("unit"), rel.group("dir"), span.start, _COUNTS.get(rel.group("n") or "", 1))
    return None if period is None else _Span(*period, span.has_year)


@lru_cache(maxsize=100_000)
def _line_spans(line: str) -> tuple[_Span, ...]:
    return tuple(s for s, _, _ in _spans(line) if not s.bound)


def _date_inside(gold: _Span, line: str) -> bool:
    """True when ``line`` (normalized) names a date or period that lies inside the gold's period."""
    for s in _line_spans(line):
        if gold.has_year and not s.has_year:
            continue
        start, end = s.start, s.end
        if not gold.has_year:
            if start.year != end.year:
                continue
            try:
                start, end = start.replace(year=_ANY_YEAR), end.replace(year=_ANY_YEAR)
            except ValueError:
                continue
        if gold.start <= start and end <= gold.end:
            return True
    return False


@lru_cache(maxsize=100_000)
def normalized_line(line: str) -> str:
    """One context line as the coverage rule reads it (memory lines recur across questions: cached)."""
    return " " + " ".join(answer_tokens(line)) + " "


def _norm_text(lines: list[str]) -> str:
    """The context as one normalized token stream; lines are kept apart so no part spans two of them."""
    return "\n".join(normalized_line(line) for line in lines)


def context_covers(gold: str, text: str) -> bool | None:
    """``covers`` on raw text (a prompt, a context): each line is one place a gold part must fit in."""
    return covers(gold, _norm_text(text.splitlines()))


def covers(gold: str, context: str) -> bool | None:
    """True when every gold part occurs as a contiguous token run in the normalized context (``_norm_text``);
    None when the gold answer has no tokens."""
    parts = gold_parts(gold)
    if not parts:
        return None
    lines = None
    for p in parts:
        if f" {p} " in context:
            continue
        period = _gold_date(p)
        if period is None:
            return False
        lines = lines if lines is not None else context.split("\n")
        if not any(_date_inside(period, line) for line in lines):
            return False
    return True


def category_label(category: str, dataset: str) -> str:
    if dataset == "locomo":
        return f"{category} {LOCOMO_CATEGORIES.get(category, '?')}"
    return LONGMEMEVAL_TYPES.get(category, category)


class MeasureRow(BaseModel):
    conversation: str
    question_id: str
    category: str
    category_label: str
    question: str
    gold: str
    n_evidence: int
    recall_host: float | None
    recall_expanded: float | None
    covered_host: bool | None
    covered_gravity: bool | None
    host_tokens: int
    gravity_tokens: int
    anchor_tokens: int
    n_expansions: int
    temporal_grounded: bool | None = None  # only LoCoMo category 2 with a parseable gold date
    temporal_stage: str | None = None  # the stage that lost it (TEMPORAL_STAGES), same questions
    query_path_ms: float | None = None  # Gravity's path for this question, query embedding included
    query_path_no_embed_ms: float | None = None  # the same without the query embedding
    host_search_ms: float | None = None  # the host's own search for the question at k
    expanded_search_ms: float | None = None  # the host's searches of all expansion queries


@dataclass
class MeasureSettings:
    k: int = 10  # recall@k and the host's k for fusion
    config: QueryConfig = field(default_factory=lambda: FULL)
    # Both contexts are filled under this budget, whatever ``config.budget`` says: measuring compares at equal cost
    # (or, with ``additive``, the method's mode).
    budget: Budget = field(default_factory=lambda: Budget(total=1000))

    def run_config(self) -> QueryConfig:
        """``config`` under the measuring budget."""
        return self.config.model_copy(update={"budget": self.budget})


def _recall(evidence: list[str], memories: list[Memory]) -> float | None:
    if not evidence:
        return None
    got = {u for m in memories for u in m.utterance_ids}
    return sum(1 for e in evidence if e in got) / len(evidence)


def _gold_spans(gold: str, reference: date | None) -> list[_Span]:
    """The periods a temporal gold names: read as the coverage rule reads a date ("the week before 9 June
    2023" is 2..8 June), else by the time grammar against ``reference`` ("last May", "2022")."""
    periods = [p for p in (_gold_date(part) for part in gold_parts(gold)) if p is not None and p.has_year]
    if periods:
        return periods

    return [_Span(s.start, s.end, True) for s in find_time_expressions(gold, reference)]


def _grounds(ev, spans: list[_Span]) -> bool:
    """An event's resolved range overlaps a gold period and is at most 6 days wider than it (bounds never count)."""
    if not ev.date_start or ev.granularity in ("before", "after"):
        return False
    try:
        s = date.fromisoformat(ev.date_start[:10])
        e = date.fromisoformat((ev.date_end or ev.date_start)[:10])
    except ValueError:
        return False
    return any((e - s).days <= (g.end - g.start).days + 6 and s <= g.end and e >= g.start for g in spans)


def _grounded(gold: str, reference: date | None, events) -> bool | None:
    spans = _gold_spans(gold, reference)
    if not spans:
        return None
    return any(_grounds(ev, spans) for ev in events)


# Where a temporal question was lost, from the extractor to the prompt (the first stage that fails).
GROUNDED, NOT_PACKED, NOT_SELECTED, WRONG_DATE, NO_EVENT = (
    "grounded", "not packed", "not selected", "wrong date", "no event")
TEMPORAL_STAGES = (GROUNDED, NOT_PACKED, NOT_SELECTED, WRONG_DATE, NO_EVENT)


def temporal_stage(gold: str, reference: date | None, evidence: list[str], store_events, selected, injected) -> str | None:
    """The stage that lost a temporal question (``TEMPORAL_STAGES``), None when the gold names no date."""
    spans = _gold_spans(gold, reference)
    if not spans:
        return None
    for stage, events in ((GROUNDED, injected), (NOT_PACKED, selected), (NOT_SELECTED, store_events)):
        if any(_grounds(ev, spans) for ev in events):
            return stage
    cited = set(evidence)
    return WRONG_DATE if any(cited & set(ev.source_ids) for ev in store_events) else NO_EVENT


def path_ms(g: GravityResult) -> tuple[float, float]:
    """Milliseconds of Gravity's query path for one result: with and without the query embedding."""
    t = g.timings_ms
    total = sum(t.get(step, 0.0) for step in ("embed", "temporal", "retrieve", "expand", "inject"))
    return total, total - t.get("embed", 0.0)


def injected_events(g: GravityResult, context: InjectedContext | None = None) -> list:
    """The event anchors whose lines are in the injected context (``context``: what the prompt holds, when the
    budget packed it again after the memories were known; otherwise Gravity's own packing)."""
    shown = set((context or g.context).anchor_ids.get("events", []))
    return [a for a in g.selected.get("events", []) if a.id in shown]


def measure_conversation(store: AnchorStore, host: Host, questions: list[Question], dataset: str = "locomo",
                         settings: MeasureSettings | None = None, embedder: Embedder | None = None,
                         progress: Progress | None = None, done_before: int = 0, total: int | None = None,
                         gravity: GravityQuery | None = None) -> list[MeasureRow]:
    """One row per question of one conversation (see the module docstring for each measure).

    ``gravity``: a ``GravityQuery`` on ``store`` to share between hosts (its index is built once)."""
    settings = settings or MeasureSettings()
    config = settings.run_config()
    gq = gravity or GravityQuery(store, embedder, config)
    session = HostSession(host, store.conversation, gq.embedder, store.utterance_vectors)
    # Every question embedded in one encoder call; the path and the host then reuse the vectors.
    texts = [q.question for q in questions]
    vectors = gq.embedder.encode(texts) if texts else None
    cache: dict = {}
    store_events = store.anchors.module("events")
    rows: list[MeasureRow] = []
    total = total or len(questions)
    k = settings.k
    for i, q in enumerate(questions):
        gold = "" if q.answer is None else str(q.answer)
        run = run_question(gq, session, q.question, q.question_date, config, k, cache, qvec=vectors[i])
        g = run.gravity
        host_text = _norm_text(run.without.lines())
        grav_text = _norm_text(run.with_.lines())
        grounded = stage = None
        if dataset == "locomo" and q.category == "2" and gold and config.mode == Mode.anchors:
            stage = temporal_stage(gold, g.qtime.reference, q.evidence, store_events, g.selected.get("events", []),
                                   injected_events(g, run.with_.anchors))
            grounded = None if stage is None else stage == GROUNDED
        path, path_no_embed = path_ms(g)
        expanded_ms = run.timings_ms.get("host_expanded_search") if run.expanded else None
        rows.append(MeasureRow(
            conversation=store.anchors.conversation_id or (store.conversation.id if store.conversation else ""),
            question_id=q.id, category=q.category, category_label=category_label(q.category, dataset),
            question=q.question, gold=gold, n_evidence=len(q.evidence),
            recall_host=_recall(q.evidence, run.original[:k]),
            recall_expanded=_recall(q.evidence, run.merged[:k]),
            covered_host=covers(gold, host_text) if gold else None,
            covered_gravity=covers(gold, grav_text) if gold else None,
            host_tokens=run.without.tokens, gravity_tokens=run.with_.tokens, anchor_tokens=run.with_.anchors.total_tokens,
            n_expansions=len(g.expansions), temporal_grounded=grounded, temporal_stage=stage,
            query_path_ms=round(path, 3), query_path_no_embed_ms=round(path_no_embed, 3),
            host_search_ms=round(run.timings_ms.get("host_search", 0.0), 3),
            expanded_search_ms=None if expanded_ms is None else round(expanded_ms, 3),
        ))
        if progress:
            progress(done_before + i + 1, total)
    return rows


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def summarize(rows: list[MeasureRow]) -> list[dict]:
    """Per category (plus 'overall' without LoCoMo's category 5): means of every measure and counts."""
    groups: dict[str, list[MeasureRow]] = defaultdict(list)
    for r in rows:
        groups[r.category_label].append(r)
    overall = [r for r in rows if not r.category_label.startswith("5 ")]
    out = []
    for label, items in [*sorted(groups.items()), ("overall (excl. 5)", overall)]:
        if not items:
            continue
        grounded = [r.temporal_grounded for r in items if r.temporal_grounded is not None]
        out.append({
            "category": label, "n": len(items),
            "recall_host": _mean(r.recall_host for r in items),
            "recall_expanded": _mean(r.recall_expanded for r in items),
            "coverage_host": _mean(r.covered_host for r in items),
            "coverage_gravity": _mean(r.covered_gravity for r in items),
            "temporal_grounding": _mean(grounded),
            "n_grounding": len(grounded),
            "tokens_host": _mean(r.host_tokens for r in items),
            "tokens_gravity": _mean(r.gravity_tokens for r in items),
        })
    return out


def stage_counts(rows: list[MeasureRow]) -> dict[str, int]:
    """How many temporal questions each stage lost (``TEMPORAL_STAGES``; ``grounded`` = not lost)."""
    counts = dict.fromkeys(TEMPORAL_STAGES, 0)
    for r in rows:
        if r.temporal_stage is not None:
            counts[r.temporal_stage] += 1
    return counts


def format_stages(counts: dict[str, int], label: str = "") -> str:
    """One line: each stage's count and share of the temporal questions with a dated gold."""
    n = sum(counts.values()) or 1
    return f"{label:<30}{sum(counts.values()):>5}" + "".join(
        f"{counts[s]:>9} {100 * counts[s] / n:5.1f}%" for s in TEMPORAL_STAGES)


def stages_header() -> str:
    return f"{'':<30}{'n':>5}" + "".join(f"{s[:15]:>16}" for s in TEMPORAL_STAGES)


def format_table(summary: list[dict], k: int = 10) -> str:
    def pct(v):
        return "   -  " if v is None else f"{100 * v:5.1f}%"

    head = (f"{'category':<22}{'n':>5}  {'R@' + str(k) + ' host':>10}{'R@' + str(k) + ' +exp':>10}"
            f"{'cov host':>10}{'cov +grav':>10}{'Δcov':>8}{'t-ground':>10}{'tok host':>10}{'tok grav':>10}")
    lines = [head, "-" * len(head)]
    for s in summary:
        delta = (None if s["coverage_gravity"] is None or s["coverage_host"] is None
                 else s["coverage_gravity"] - s["coverage_host"])
        d = "   -  " if delta is None else f"{100 * delta:+5.1f}"
        ground = pct(s["temporal_grounding"]) if s["n_grounding"] else "   -  "
        lines.append(f"{s['category']:<22}{s['n']:>5}  {pct(s['recall_host']):>10}{pct(s['recall_expanded']):>10}"
                     f"{pct(s['coverage_host']):>10}{pct(s['coverage_gravity']):>10}{d:>8}{ground:>10}"
                     f"{(s['tokens_host'] or 0):>10.0f}{(s['tokens_gravity'] or 0):>10.0f}")
    return "\n".join(lines)


def write_csv(rows: list[MeasureRow], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(MeasureRow.model_fields))
        writer.writeheader()
        for r in rows:
            writer.writerow(r.model_dump())
    return path


@dataclass
class MeasureReport:
    rows: list[MeasureRow]
    summary: list[dict]
    csv_path: Path | None
    summary_csv_path: Path | None
    table: str
    seconds: float


def variant_slug(config: QueryConfig) -> str:
    """The variant name as a file-name part (+ and - spelled out)."""
    return config.variant.replace("+", "plus").replace("-", "minus")


def plan_questions(conversations: list[Conversation], limit: int | None = None) -> list[tuple[Conversation, list[Question]]]:
    """The measurable questions (a gold answer, or category 5) per conversation, the first ``limit`` in all."""
    plan: list[tuple[Conversation, list[Question]]] = []
    left = limit
    for conv in conversations:
        qs = [q for q in conv.questions if q.answer is not None or q.category == "5"]
        if left is not None:
            qs = qs[:left]
            left -= len(qs)
        if qs:
            plan.append((conv, qs))
        if left is not None and left <= 0:
            break
    return plan


def load_plan(dataset: str, path: str | Path, conversation: str | None = None,
              limit: int | None = None) -> tuple[str, list[tuple[Conversation, list[Question]]]]:
    """The dataset name checked and the conversations' questions to measure (``plan_questions``)."""
    dataset = dataset.lower()
    if dataset not in ("locomo", "longmemeval"):
        raise InputError(f"unknown dataset {dataset!r}; choose locomo or longmemeval", source=str(path))
    conversations = load_conversations(path, conversation=conversation)
    if not conversations:
        raise InputError("no conversation to measure" + (f" with id {conversation!r}" if conversation else ""),
                         source=str(path))
    return dataset, plan_questions(conversations, limit)


def write_summary_csv(rows: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["category"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def run_measure(dataset: str, path: str | Path, host_factory: Callable[[], Host], runs_dir: str | Path,
                conversation: str | None = None, limit: int | None = None, settings: MeasureSettings | None = None,
                embedder: Embedder | None = None, progress: Progress | None = None) -> MeasureReport:
    """Measure every question (or the first ``limit``) of ``path`` on the stores under ``runs_dir`` (which must
    exist: ``build.ensure_stores``); writes CSVs."""
    started = time.perf_counter()
    settings = settings or MeasureSettings()
    dataset, plan = load_plan(dataset, path, conversation, limit)
    total = sum(len(qs) for _, qs in plan)
    runs = Path(runs_dir)
    rows: list[MeasureRow] = []
    host_name = "host"
    for conv, qs in plan:
        store = load_conversation_store(conv, runs)
        host = host_factory()
        host_name = getattr(host, "name", host_name)
        rows += measure_conversation(store, host, qs, dataset, settings, embedder, progress, len(rows), total)
    summary = summarize(rows)
    stem = f"measure_{dataset}_{host_name}_{variant_slug(settings.config)}"
    if conversation:
        stem += f"_{conversation}"
    csv_path = write_csv(rows, runs / f"{stem}.csv")
    summary_path = write_summary_csv(summary, runs / f"{stem}_summary.csv")
    return MeasureReport(rows=rows, summary=summary, csv_path=csv_path, summary_csv_path=summary_path,
                         table=format_table(summary, settings.k), seconds=time.perf_counter() - started)


PLAIN_LOCOMO = {"1": "Multi-hop", "2": "Temporal", "3": "Open-domain", "4": "Single-hop", "5": "Adversarial"}
PLAIN_LONGMEMEVAL = {"single-session-user": "One session, the user's facts",
                     "single-session-assistant": "One session, the assistant's words",
                     "single-session-preference": "One session, a preference", "multi-session": "Across sessions",
                     "knowledge-update": "Updated facts", "temporal-reasoning": "Time reasoning"}


def plain_category(category: str, dataset: str) -> str:
    """A category as people read it: 'Temporal (LoCoMo 2)', 'Updated facts', 'Single-hop'."""
    if dataset == "locomo" and category in PLAIN_LOCOMO:
        return f"{PLAIN_LOCOMO[category]} (LoCoMo {category})"
    if dataset == "longmemeval" and category in PLAIN_LONGMEMEVAL:
        return PLAIN_LONGMEMEVAL[category]
    return str(category).replace("-", " ").replace("_", " ").capitalize() or "No category"


def summarize_with_intervals(rows: list[MeasureRow], dataset: str, small_n: int = 10, seed: int = 0) -> list[dict]:
    """Per category, then all questions: n, coverage and recall@k alone and with Gravity as bootstrap
    intervals (``statistics.Interval``), the paired gain, and ``small`` when n < ``small_n``. LoCoMo's
    adversarial category is shown but left out of the total, as in ``summarize``."""
    groups: dict[str, list[MeasureRow]] = defaultdict(list)
    for r in rows:
        groups[r.category].append(r)
    adversarial = dataset == "locomo" and "5" in groups
    total = [r for r in rows if not (dataset == "locomo" and r.category == "5")]
    label_all = "All questions" + (" but adversarial (LoCoMo 5)" if adversarial else "")
    out = []
    for key, label, items in ([(c, plain_category(c, dataset) + (" · not in the total" if dataset == "locomo"
                                                                    and c == "5" else ""), groups[c])
                               for c in category_order(dataset, groups)] + [("all", label_all, total)]):
        if not items:
            continue
        host = [r.covered_host for r in items]
        grav = [r.covered_gravity for r in items]
        out.append({
            "key": key, "label": label, "n": len(items), "small": len(items) < small_n,
            "coverage_host": bootstrap_ci(host, seed=seed), "coverage_gravity": bootstrap_ci(grav, seed=seed),
            "coverage_gain": paired_bootstrap_ci(host, grav, seed=seed),
            "recall_host": bootstrap_ci([r.recall_host for r in items], seed=seed),
            "recall_expanded": bootstrap_ci([r.recall_expanded for r in items], seed=seed),
        })
    return out
