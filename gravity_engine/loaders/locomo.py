"""LoCoMo (``locomo10.json``): samples with ``conversation.session_<N>`` turn lists and QA.

Quirks handled (see ../shared/data/README.md): sessions are found by their ``session_<N>`` keys,
not by date keys (conv-26 has dates for sessions that do not exist); category-5 questions carry
``adversarial_answer``; some answers are ints; a few evidence strings are malformed.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..conversation import Conversation, Question
from .builder import MISSING, ConversationBuilder, FileContext, jpath

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D\d+:\d+")
_TURN_FIELDS = ("speaker", "text", "dia_id", "blip_caption")
_KNOWN_SAMPLE_KEYS = ("sample_id", "conversation", "qa")


def is_locomo(item: Any) -> bool:
    return isinstance(item, dict) and "conversation" in item and ("sample_id" in item or "qa" in item)


def read_locomo(items: list[tuple[str, Any]], ctx: FileContext) -> Iterator[tuple[str, tuple, Any]]:
    """Yield (conversation id, other names, build function) per sample."""
    for base, sample in items:
        ctx.expect(sample, dict, base, "a LoCoMo sample object with sample_id, conversation and qa")
        sid = ctx.id_field(sample.get("sample_id", MISSING), jpath(base, "sample_id"), "the sample_id")
        yield sid, (), (lambda base=base, sample=sample, sid=sid: _sample(base, sample, sid, ctx))


def _sample(base: str, sample: dict, sid: str, ctx: FileContext) -> Conversation:
    cpath = jpath(base, "conversation")
    conv = ctx.expect(sample.get("conversation", MISSING), dict, cpath,
                      "the 'conversation' object with speaker_a, speaker_b and session_<N> turn lists")
    b = ConversationBuilder(ctx, sid, "locomo", where=base)
    speakers = []
    for key in ("speaker_a", "speaker_b"):
        if key in conv:
            speakers.append(ctx.text_field(conv[key], jpath(cpath, key), key).strip())
    numbered = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    if not numbered:
        raise ctx.error("no session_<N> turn lists; expected keys session_1, session_2, ...", cpath)
    for n, key in numbered:
        path = jpath(cpath, key)
        turns = ctx.expect(conv[key], list, path, "a list of turns")
        date_key = f"{key}_date_time"
        when = ctx.read_time(conv.get(date_key), jpath(cpath, date_key), b.log)
        if when == (None, None):
            b.log.add("no-date", f"{path} has no {date_key}; its time is unknown")
        session = b.new_session(key, when=when, where=path)
        for i, turn in enumerate(turns):
            tp = jpath(path, i)
            ctx.expect(turn, dict, tp, "a turn object with speaker, text and dia_id")
            uid = None
            if turn.get("dia_id") is not None:
                uid = ctx.id_field(turn["dia_id"], jpath(tp, "dia_id"), "the dia_id")
            meta: dict[str, Any] = {k: v for k, v in turn.items() if k not in _TURN_FIELDS}
            if turn.get("blip_caption") is not None:
                meta["image_caption"] = ctx.text_field(turn["blip_caption"], jpath(tp, "blip_caption"),
                                                       "the image caption")
            b.add(session, speaker=turn.get("speaker", MISSING), text=turn.get("text", MISSING), where=tp,
                  speaker_where=jpath(tp, "speaker"), text_where=jpath(tp, "text"), uid=uid, metadata=meta)
    questions = _questions(jpath(base, "qa"), sample.get("qa", []), sid, ctx, b)
    extra = {k: v for k, v in sample.items() if k not in _KNOWN_SAMPLE_KEYS}
    return b.finish(speakers=speakers, questions=questions, metadata=extra)


def _questions(path: str, qa: Any, sid: str, ctx: FileContext, b: ConversationBuilder) -> list[Question]:
    ctx.expect(qa, list, path, "a list of question objects")
    known_ids = {u.id for s in b.sessions for u in s.utterances}
    out = []
    for i, q in enumerate(qa):
        qp = jpath(path, i)
        ctx.expect(q, dict, qp, "a question object with question, answer, evidence and category")
        question = ctx.text_field(q.get("question", MISSING), jpath(qp, "question"), "the question")
        answer = q.get("answer")
        if answer is not None:
            answer = str(ctx.expect(answer, (str, int, float), jpath(qp, "answer"), "the answer as text or a number"))
        category = q.get("category", "")
        category = str(ctx.expect(category, (str, int), jpath(qp, "category"), "the category as a number or text"))
        evidence, malformed = [], []
        raw_evidence = q.get("evidence") if q.get("evidence") is not None else []
        for e in ctx.expect(raw_evidence, list, jpath(qp, "evidence"), "a list of dia_ids"):
            if isinstance(e, str) and _EVIDENCE.fullmatch(e.strip()):
                evidence.append(e.strip())
                if e.strip() not in known_ids:
                    b.log.add("evidence", f"{jpath(qp, 'evidence')} cites {e.strip()!r}, which is not in the dialogue")
            else:
                malformed.append(e)
        meta = {k: v for k, v in q.items() if k not in ("question", "answer", "category", "evidence")}
        if malformed:
            meta["malformed_evidence"] = malformed
            b.log.add("malformed", f"{jpath(qp, 'evidence')} holds malformed ids {malformed!r}; kept in metadata only")
        out.append(Question(id=f"{sid}-q{i}", question=question, answer=answer, category=category,
                            evidence=evidence, metadata=meta))
    return out
