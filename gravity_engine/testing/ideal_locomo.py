""""Ideal" LoCoMo anchors: a measuring instrument, not a model.

This module answers what the query path does with near-perfect anchors. A scripted
OpenAI-compatible endpoint (``ScriptedOpenAIServer`` on 127.0.0.1) replies to the ``llm`` backend's
extraction prompts from LoCoMo's own annotations instead of from a model, and the real ``llm``
pipeline does the rest: prompts, parsing, invented-id checks, consolidation, date handling,
verification and embeddings. Nothing here extracts anything from text; the anchors are as good as
the annotations:

* entities: each speaker, with the ``observation`` facts whose evidence utterances are in the batch as
  attributes (key ``fact``, value the annotated sentence, sources the evidence ids), plus the
  capitalized names found in those facts (type ``other`` unless a word like "Museum" says otherwise);
* events: each session's ``event_summary`` strings, participants the speaker (and the other speaker
  when named), cited by the session's utterance that overlaps the event most (words of the utterance
  and of the facts citing it); when that utterance says when ("yesterday", "last Friday"), the
  expression is the event's ``when_text`` and the pipeline resolves it against the session date, as
  for a model that leaves a relative date to the engine; otherwise the event is dated to the session
  date (``granularity`` day). LoCoMo dates every event summary to its session, but its questions
  expect "yesterday" to mean the day before;
* topics: one per session, labelled by the session summary's most distinctive words, summary the
  ``session_summary``, state its first substantive sentence, key facts the observation facts.

LoCoMo is CC BY-NC: its text is read at run time from the user's copy and never stored in this
repository. The stored ``built_with.llm_model`` is ``ideal-locomo-annotations``, so a store built
here can never be mistaken for a model's.

    store = build_ideal_store("../shared/data/locomo10.json", "conv-26", "runs/ideal/conv-26")
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable

from ..build import build_store
from ..errors import InputError
from ..fileio import atomic_write_json
from ..llm.client import OpenAIClient
from ..llm.config import NO_KEY, LLMConfig
from ..llm.guard import allow_local_model_requests
from ..loaders import load_conversations
from ..loaders.jsontext import parse_json
from ..loaders.options import LoadLimits
from ..loaders.source import read_path
from ..timeparse import find_time_expressions, parse_datetime
from .openai_server import (
    _STOP,
    Router,
    ScriptedOpenAIServer,
    _conversation_lines,
    _message_text,
    _prompt_name,
    echo_extraction_router,
)

IDEAL_MODEL = "ideal-locomo-annotations"
ROUTER_VERSION = "2"  # bump when the replies change: it names the isolated LLM cache
CACHE_DIRNAME = ".ideal-cache"
EXTRACTION_PROMPTS = ("extract_fused", "extract_entities", "extract_events", "extract_topics")

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\d+:\d+")
_HEADER = re.compile(r"^Session (.*?), date: (\S+)", re.M)
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# A session summary usually opens with who met when ("X and Y caught up at 7:31 pm on ..."): not a state.
_MEETING = re.compile(r"\b\d{1,2}:\d{2}\b|\bhad a conversation\b|\bcaught up\b|\bspoke\b|\bconversed\b|\bmet\b", re.I)
_CAP_TOKEN = re.compile(r"[A-Z][A-Za-z0-9'’&.-]*")
_CONNECTORS = {"of", "the", "&", "de", "for"}
_NOT_NAMES = set("""The A An Her His Their Our My Your This That These Those It Its He She They We I You Last Next
After Before When While During Since Also Both Each Every Some One Two Three First Second Recently Currently
Today Yesterday Tomorrow However Although Despite Being Having In On At For With From By To As If But And Or So
Mr Mrs Ms Dr January February March April May June July August September October November December Monday Tuesday
Wednesday Thursday Friday Saturday Sunday""".split())
_PLACE_WORDS = {"city", "park", "museum", "beach", "lake", "mountain", "mountains", "river", "street", "island",
                "center", "centre", "restaurant", "cafe", "library", "hospital", "state", "county", "valley"}
_ORG_WORDS = {"university", "college", "school", "company", "inc", "club", "team", "association", "foundation",
              "church", "organization", "society", "academy", "institute", "corp", "band", "group", "store"}
_EXTRA_STOP = set("""went go going get got made make makes making take took took find found feel feels felt
want wants wanted like likes liked also really very much many lot lots new time times things thing""".split())
# Words of how a summary reports a conversation, not of what it is about: never a topic label.
_SUMMARY_SPEAK = set("""mentioned mention mentions shared share shares sharing expressed express expresses talked talk
talks asked ask asks discussed discuss discusses told tell tells said say says agreed agree agrees praised praise
complimented compliment thanked thank suggested suggest replied reply encouraged encourage encourages encouraging
caught catch chat chatted conversation session herself himself themselves itself other others each both need needs
possibly later earlier great good nice glad happy excited proud importance important able day days week weeks
doing stay see keep hard around little kind part everyone people feeling years soon believe something special
awesome amazing wonderful""".split())
_PET = re.compile(r"\b(?:cat|cats|dog|dogs|pet|pets|puppy|kitten|turtle|turtles|hamster|horse|parrot|rabbit|bunny)"
                  r"(?:,)?\s+(?:named\s+|called\s+)?([A-Z][a-z]+)")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str, drop: set[str] = frozenset()) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and w not in _EXTRA_STOP and w not in drop}


def _session_number(key: str) -> int | None:
    m = re.search(r"(\d+)", key)
    return int(m.group(1)) if m else None


def _evidence_ids(raw: Any) -> list[str]:
    """Evidence as annotated: one id, a list of ids, or ids in one comma-separated string."""
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        for match in _DIA_ID.findall(str(item)):
            if match not in out:
                out.append(match)
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _iso_day(text: str | None) -> str | None:
    if not text:
        return None
    if _ISO_DAY.match(text):
        return text[:10]

    parsed = parse_datetime(text)
    return parsed.date().isoformat() if parsed is not None else None


@dataclass
class _Turn:
    uid: str
    speaker: str
    text: str
    session: int
    position: int  # order within the sample


@dataclass
class _Fact:
    speaker: str
    text: str
    session: int
    sources: list[str]  # evidence ids that exist in the dialogue
    placed_by_overlap: bool = False


@dataclass
class _Event:
    speaker: str
    text: str
    session: int
    anchor: str  # the utterance whose batch emits it
    participants: list[str]
    scores: dict[str, float] = field(default_factory=dict)  # utterance id -> overlap, for extra sources


@dataclass
class _Topic:
    session: int
    label: str
    keywords: list[str]
    summary: str
    state: str
    first_uid: str


class IdealLocomoRouter:
    """Answers the extraction prompts of one LoCoMo sample from its annotations; a ``Router`` for
    ``ScriptedOpenAIServer``. Everything is planned once, here: which batch utterance each fact, event and
    topic is tied to. Replies only cite ids present in the prompt. Other prompts get ``echo_extraction_router``."""

    def __init__(self, sample: dict[str, Any]):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ValueError("expected a LoCoMo sample dict with a 'conversation' object")
        self.sample_id = str(sample.get("sample_id", ""))
        conv = sample["conversation"]
        self.speakers = [str(conv[k]).strip() for k in ("speaker_a", "speaker_b") if conv.get(k)]
        self.turns: dict[str, _Turn] = {}
        self.session_turns: dict[int, list[_Turn]] = {}
        self.session_dates: dict[int, str | None] = {}
        for key in sorted((k for k in conv if _SESSION_KEY.fullmatch(k)), key=_session_number):
            n = _session_number(key)
            self.session_dates[n] = _iso_day(str(conv.get(f"{key}_date_time") or ""))
            for turn in conv.get(key) or []:
                if not isinstance(turn, dict) or not turn.get("dia_id"):
                    continue
                uid = str(turn["dia_id"]).strip()
                if uid in self.turns:
                    continue  # the loader renames a repeated id; the annotation means the first
                text = str(turn.get("text") or "")
                if turn.get("blip_caption"):
                    text += f" [shares an image: {turn['blip_caption']}]"
                t = _Turn(uid, str(turn.get("speaker") or "").strip(), text, n, len(self.turns))
                self.turns[uid] = t
                self.session_turns.setdefault(n, []).append(t)
        self.stats: Counter[str] = Counter()
        self.facts = self._plan_facts(sample.get("observation") or {})
        self.facts_by_uid: dict[str, list[_Fact]] = {}
        for f in self.facts:
            for uid in f.sources:
                self.facts_by_uid.setdefault(uid, []).append(f)
        self.events = self._plan_events(sample.get("event_summary") or {})
        self.events_by_anchor: dict[str, list[_Event]] = {}
        for ev in self.events:
            self.events_by_anchor.setdefault(ev.anchor, []).append(ev)
        self.topics = self._plan_topics(sample.get("session_summary") or {})
        self.topics_by_session = {t.session: t for t in self.topics}
        self.stats.update({"sessions": len(self.session_turns), "utterances": len(self.turns),
                           "facts": len(self.facts), "events": len(self.events), "topics": len(self.topics)})

    # --- planning ---------------------------------------------------------------------------------
    def _best_turns(self, text: str, session: int, speaker: str | None) -> dict[str, float]:
        """IDF-weighted overlap of ``text`` with each utterance of the session (its words plus the words of
        the facts citing it), a small bonus for the speaker's own turns; id -> score."""
        turns = self.session_turns.get(session, [])
        names = {w.lower() for s in self.speakers for w in s.split()}
        query = _terms(text, names)
        bags = {}
        for t in turns:
            bag = _terms(t.text, names)
            for f in self.facts_by_uid.get(t.uid, []) if hasattr(self, "facts_by_uid") else []:
                bag |= _terms(f.text, names)
            bags[t.uid] = bag
        df = Counter(w for bag in bags.values() for w in bag)
        n = max(1, len(turns))
        scores: dict[str, float] = {}
        for t in turns:
            s = sum(math.log(1 + n / df[w]) for w in query & bags[t.uid])
            if speaker and t.speaker == speaker and s > 0:
                s += 0.5
            scores[t.uid] = s
        return scores

    def _plan_facts(self, observation: dict[str, Any]) -> list[_Fact]:
        facts: list[_Fact] = []
        for key, by_speaker in observation.items():
            session = _session_number(key)
            if session is None or not isinstance(by_speaker, dict):
                continue
            for speaker, items in by_speaker.items():
                for item in items if isinstance(items, list) else []:
                    if not isinstance(item, (list, tuple)) or not item or not str(item[0]).strip():
                        continue
                    text = str(item[0]).strip()
                    sources = [u for u in _evidence_ids(item[1] if len(item) > 1 else "") if u in self.turns]
                    fact = _Fact(str(speaker).strip(), text, session, sources)
                    if not sources:  # evidence missing or not in the dialogue: the best matching turn stands in
                        scores = self._best_turns(text, session, fact.speaker)
                        if scores:
                            fact.sources = [max(scores, key=lambda u: (scores[u], -self.turns[u].position))]
                            fact.placed_by_overlap = True
                            self.stats["facts_placed_by_overlap"] += 1
                        else:
                            self.stats["facts_unplaced"] += 1
                            continue
                    facts.append(fact)
        return facts

    def _plan_events(self, event_summary: dict[str, Any]) -> list[_Event]:
        events: list[_Event] = []
        for key, by_speaker in event_summary.items():
            session = _session_number(key)
            if session is None or not isinstance(by_speaker, dict) or session not in self.session_turns:
                if isinstance(by_speaker, dict):
                    self.stats["events_without_session"] += sum(
                        len(v) for k, v in by_speaker.items() if k != "date" and isinstance(v, list))
                continue
            if self.session_dates.get(session) is None:
                self.session_dates[session] = _iso_day(str(by_speaker.get("date") or ""))
            for speaker, items in by_speaker.items():
                if speaker == "date" or not isinstance(items, list):
                    continue
                speaker = str(speaker).strip()
                for item in items:
                    text = str(item).strip()
                    if not text:
                        continue
                    scores = self._best_turns(text, session, speaker)
                    first = self.session_turns[session][0].uid
                    anchor = max(scores, key=lambda u: (scores[u], -self.turns[u].position)) if scores else first
                    if scores.get(anchor, 0) <= 0:
                        anchor = next((t.uid for t in self.session_turns[session] if t.speaker == speaker), first)
                        self.stats["events_without_overlap"] += 1
                    participants = [speaker] + [s for s in self.speakers if s != speaker
                                                and re.search(rf"\b{re.escape(s)}\b", text)]
                    events.append(_Event(speaker, text, session, anchor, participants, scores))
        return events

    def _plan_topics(self, session_summary: dict[str, Any]) -> list[_Topic]:
        summaries = {}
        for key, text in session_summary.items():
            n = _session_number(key)
            if n is not None and n in self.session_turns and isinstance(text, str) and text.strip():
                summaries[n] = text.strip()
        names = {w.lower() for s in self.speakers for w in s.split()}
        months = {m.lower() for m in _NOT_NAMES}
        skip = _STOP | _EXTRA_STOP | _SUMMARY_SPEAK | names | months
        bags = {n: Counter(w for w in _WORD.findall(t.lower()) if w not in skip and not w.endswith("'s"))
                for n, t in summaries.items()}
        df = Counter(w for bag in bags.values() for w in bag)
        topics: list[_Topic] = []
        used_labels: set[str] = set()
        for n in sorted(summaries):
            # Distinctive in the summary (tf-idf over the sample's summaries) and said in the session itself.
            said = Counter(w for t in self.session_turns[n] for w in _WORD.findall(t.text.lower()))

            def weight(w: str) -> float:
                return bags[n][w] * math.log(1 + len(bags) / df[w]) * (1 + math.log(1 + said[w]))

            ranked = sorted(bags[n], key=lambda w: (-weight(w), w))
            keywords = ranked[:6]
            label = " ".join(keywords[:3]) or f"session {n}"
            if label in used_labels:
                label = f"{label} (session {n})"
            used_labels.add(label)
            sentences = _sentences(summaries[n])
            body = [s for s in sentences if not _MEETING.search(s)] or sentences
            topics.append(_Topic(n, label, keywords, summaries[n], body[0] if body else "",
                                 self.session_turns[n][0].uid))
        return topics

    def plan_summary(self) -> dict[str, int]:
        """How the annotations were placed (independent of which batches were asked, or cached)."""
        return dict(self.stats)

    # --- replies ----------------------------------------------------------------------------------
    def __call__(self, request_json: dict[str, Any]) -> Any:
        name = _prompt_name(request_json)
        lines = _conversation_lines(request_json)
        if name not in EXTRACTION_PROMPTS or not lines or not any(uid in self.turns for uid, _, _ in lines):
            return echo_extraction_router(request_json)
        ids = [uid for uid, _, _ in lines]
        present = set(ids)
        session_date = self._header_date(request_json)
        reply: dict[str, Any] = {}
        if name in ("extract_fused", "extract_entities"):
            reply["entities"] = self._entities(lines, present)
        if name in ("extract_fused", "extract_events"):
            reply["events"] = self._events(ids, present, session_date)
        if name in ("extract_fused", "extract_topics"):
            reply["topics"] = self._topics(lines, present)
        return reply

    @staticmethod
    def _header_date(request_json: dict[str, Any]) -> str | None:
        for message in request_json.get("messages", []):
            if message.get("role") == "user":
                match = _HEADER.search(_message_text(message))
                return _iso_day(match.group(2)) if match else None
        return None

    def _batch_facts(self, ids: list[str], present: set[str]) -> list[tuple[_Fact, list[str]]]:
        out, seen = [], set()
        for uid in ids:
            for f in self.facts_by_uid.get(uid, []):
                if id(f) not in seen:
                    seen.add(id(f))
                    out.append((f, [s for s in f.sources if s in present]))
        return out

    def _entities(self, lines: list[tuple[str, str, str]], present: set[str]) -> list[dict[str, Any]]:
        ids = [uid for uid, _, _ in lines]
        facts = self._batch_facts(ids, present)
        said: dict[str, list[str]] = {}
        for uid, speaker, _ in lines:
            said.setdefault(speaker, []).append(uid)
        speakers = list(dict.fromkeys([*said, *(f.speaker for f, _ in facts)]))
        entities = []
        for speaker in speakers:
            others = [s for s in self.speakers if s != speaker]
            attributes = [{"key": "fact", "value": f.text, "source_ids": src}
                          for f, src in facts if f.speaker == speaker]
            sources = said.get(speaker) or list(dict.fromkeys(s for a in attributes for s in a["source_ids"]))
            entities.append({
                "name": speaker, "type": "person", "aliases": [],
                "description": f"{speaker}, a speaker in the conversation" + (f" with {others[0]}" if others else ""),
                "attributes": attributes, "relations": [], "source_ids": sources,
            })
        named: dict[str, dict[str, Any]] = {}
        speaker_words = {w for s in self.speakers for w in s.split()}
        for f, src in facts:
            pets = set(_PET.findall(f.text))
            for name in _names_in(f.text, speaker_words):
                kind = "pet" if name in pets else _guess_type(name)
                entry = named.setdefault(name.lower(), {"name": name, "type": kind, "aliases": [],
                                                       "description": "", "attributes": [], "relations": [],
                                                       "source_ids": []})
                entry["source_ids"] += [s for s in src if s not in entry["source_ids"]]
        entities += [e for e in named.values() if e["name"] not in speakers]
        return entities

    def _events(self, ids: list[str], present: set[str], session_date: str | None) -> list[dict[str, Any]]:
        out = []
        for uid in ids:  # in utterance order: the list is in time order
            for ev in self.events_by_anchor.get(uid, []):
                best = ev.scores.get(ev.anchor, 0.0)
                close = (u for u in present if u != ev.anchor and best > 0 and ev.scores.get(u, 0) >= 0.75 * best)
                extra = sorted(close,
                               key=lambda u: (-ev.scores[u], self.turns[u].position if u in self.turns else 0))[:2]
                day = session_date or self.session_dates.get(ev.session)
                when = _time_expression(self.turns[ev.anchor].text, day) if ev.anchor in self.turns else ""
                out.append({"what": ev.text, "participants": ev.participants, "when_text": when,
                            "date_start": None if when else day, "date_end": None,
                            "granularity": "day" if day or when else "unknown",
                            "where": "", "source_ids": [ev.anchor, *extra], "follows": [], "causes": []})
        return out

    def _topics(self, lines: list[tuple[str, str, str]], present: set[str]) -> list[dict[str, Any]]:
        ids = [uid for uid, _, _ in lines]
        facts = self._batch_facts(ids, present)
        out = []
        for session in dict.fromkeys(self.turns[u].session for u in ids if u in self.turns):
            topic = self.topics_by_session.get(session)
            if topic is None:
                continue
            in_session = [u for u in ids if u in self.turns and self.turns[u].session == session]
            opening = topic.first_uid in present
            participants = list(dict.fromkeys(s for _, s, _ in lines)) or self.speakers
            out.append({
                "label": topic.label, "keywords": topic.keywords,
                "summary": topic.summary if opening else "",
                "key_facts": [{"text": f.text, "source_ids": src} for f, src in facts if f.session == session],
                "participants": participants, "state": topic.state if opening else "",
                "source_ids": in_session,
            })
        return out


def _names_in(text: str, speaker_words: set[str]) -> list[str]:
    """Capitalized names in an annotated fact: runs of capitalized words (with 'of', 'the', ... inside),
    minus sentence-initial single words, speakers, months, weekdays and pronouns."""
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"[A-Za-z0-9&](?:[A-Za-z0-9'’&.-]*[A-Za-z0-9.])?", text)]
    names: list[str] = []
    run: list[tuple[str, int]] = []

    def flush() -> None:
        while run and (run[-1][0].lower() in _CONNECTORS):
            run.pop()
        words = [w.rstrip(".") for w, _ in run]
        words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
        skipped = 0
        while skipped < len(words) and words[skipped] in _NOT_NAMES:
            skipped += 1
        first_at = run[skipped][1] if skipped < len(run) else 0
        words = words[skipped:]
        if words and not any(w in speaker_words for w in words):
            sentence_start = first_at == 0 or text[:first_at].rstrip().endswith((".", "!", "?"))
            if (len(words) > 1 or not sentence_start) and len(words[0]) > 1 and words[0] not in _NOT_NAMES:
                name = " ".join(words)
                if name not in names and not name.isdigit():
                    names.append(name)
        run.clear()

    for word, start in tokens:
        if _CAP_TOKEN.fullmatch(word) and word not in ("I",):
            if any(w in speaker_words for w in [word.rstrip(".").removesuffix("'s").removesuffix("’s")]):
                flush()
                continue
            run.append((word, start))
            if word.endswith(".") or word.endswith(("'s", "’s")):
                flush()
        elif run and word.lower() in _CONNECTORS:
            run.append((word, start))
        else:
            flush()
    flush()
    return names


def _guess_type(name: str) -> str:
    words = {w.lower() for w in name.split()}
    if words & _PLACE_WORDS:
        return "place"
    if words & _ORG_WORDS:
        return "organization"
    return "other"


def ideal_router(sample: dict[str, Any]) -> IdealLocomoRouter:
    """The router for one LoCoMo sample dict (lookups built once)."""
    return IdealLocomoRouter(sample)


# --- building a store ---------------------------------------------------------------------------------

def _time_expression(text: str, day: str | None) -> str:
    """The first time expression of an utterance that resolves against its session day ('' when none)."""
    if not day:
        return ""
    try:
        spans = find_time_expressions(text, date.fromisoformat(day[:10]))
    except ValueError:
        return ""
    return spans[0].text if spans else ""


def annotations_fingerprint(sample: dict[str, Any]) -> str:
    """A short hash of everything the replies depend on, so a changed file never reuses cached replies."""
    keys = ("sample_id", "conversation", "observation", "event_summary", "session_summary")
    blob = json.dumps({k: sample.get(k) for k in keys}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{ROUTER_VERSION}\n{blob}".encode()).hexdigest()[:12]


def read_locomo_samples(locomo_path: str | Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo file as dicts; an ``InputError`` (one line) when the file is missing,
    unreadable or not LoCoMo."""
    limits = LoadLimits()
    src = read_path(locomo_path, limits)
    try:
        value = parse_json(src, limits)
    except InputError as err:
        raise InputError(f"is not a LoCoMo file (not one JSON document: {err.detail})", source=str(locomo_path),
                         where=err.where) from None
    shaped = isinstance(value, list) and bool(value) and all(
        isinstance(s, dict) and isinstance(s.get("conversation"), dict) and s.get("sample_id") for s in value)
    if not shaped:
        raise InputError("is not a LoCoMo file: expected a JSON list of samples with sample_id and conversation "
                         "(build-ideal needs LoCoMo's observation, event_summary and session_summary annotations)",
                         source=str(locomo_path))
    if not any(s.get("observation") or s.get("event_summary") or s.get("session_summary") for s in value):
        raise InputError("holds LoCoMo samples without annotations (observation, event_summary, session_summary); "
                         "there is nothing to build ideal anchors from", source=str(locomo_path))
    return value


def pick_sample(samples: list[dict[str, Any]], conversation_id: str, source: str = "") -> dict[str, Any]:
    for s in samples:
        if str(s.get("sample_id")) == conversation_id:
            return s
    ids = ", ".join(str(s.get("sample_id")) for s in samples[:20])
    raise InputError(f"no conversation {conversation_id!r}; available: {ids}", source=source or None)


def build_ideal_store(locomo_path: str | Path, conversation_id: str, out_dir: str | Path, embedder: Any = None,
                      progress: Callable | None = None, *, sample: dict[str, Any] | None = None,
                      conversation: Any = None, batch_size: int = 20, cache_dir: str | Path | None = None,
                      verify: bool = True):
    """Build the ideal anchor store of one LoCoMo conversation through the real ``llm`` pipeline.

    The scripted endpoint runs on 127.0.0.1 for the duration of the build only; replies are cached in
    ``cache_dir`` (default ``<out_dir>/.ideal-cache/<router version and annotations hash>``, never the
    user's LLM cache), so a rebuild makes no call. ``sample``/``conversation`` spare re-reading the file
    (the CLI's ``--all``). The build report gains an ``ideal`` section: how the annotations were placed
    and how many requests the endpoint answered.
    """
    if sample is None:
        sample = pick_sample(read_locomo_samples(locomo_path), conversation_id, str(locomo_path))
    if conversation is None:
        conversation = load_conversations(locomo_path, conversation=conversation_id, fmt="locomo")[0]
    if conversation.format != "locomo":
        raise InputError(f"conversation {conversation_id!r} is not a LoCoMo sample", source=str(locomo_path))
    router = ideal_router(sample)
    out = Path(out_dir)
    version = f"v{ROUTER_VERSION}-{annotations_fingerprint(sample)}"
    cache = Path(cache_dir) if cache_dir else out / CACHE_DIRNAME / version
    checkpoints = out / ".checkpoints"
    before = set(checkpoints.iterdir()) if checkpoints.is_dir() else set()
    with allow_local_model_requests(), ScriptedOpenAIServer(router=router, models=[IDEAL_MODEL]) as server:
        config = LLMConfig(base_url=server.base_url, api_key=NO_KEY, model=IDEAL_MODEL, timeout=60.0, max_retries=1,
                           backoff_base=0.05, backoff_max=1.0, concurrency=4, cache=True, cache_dir=cache)
        store = build_store(conversation, out, backend="llm", fused=True, llm_client=OpenAIClient(config),
                            embedder=embedder, batch_size=batch_size, progress=progress, verify=verify)
        requests = len(server.chat_requests())
        errors = list(server.errors)
    if not store.report["batches"]["failed"] and checkpoints.is_dir():
        # The fingerprint names the endpoint's port, new on every run: these checkpoints can never be
        # resumed from (the reply cache makes a rerun free instead), so they are not left behind.
        for path in set(checkpoints.iterdir()) - before:
            shutil.rmtree(path, ignore_errors=True)
        if not any(checkpoints.iterdir()):
            checkpoints.rmdir()
    store.report["ideal"] = {
        "instrument": "LoCoMo annotations through the llm pipeline (not a model)",
        "router_version": ROUTER_VERSION, "annotations_hash": annotations_fingerprint(sample),
        "endpoint_requests": requests, "endpoint_errors": errors[:5], "plan": router.plan_summary(),
    }
    atomic_write_json(out / "build_report.json", store.report)
    return store


__all__ = ["IDEAL_MODEL", "IdealLocomoRouter", "ROUTER_VERSION", "Router", "annotations_fingerprint",
           "build_ideal_store", "ideal_router", "pick_sample", "read_locomo_samples"]
