"""LongMemEval instances: each instance (one question and its haystack of sessions) is one conversation.

Sessions are put in time order when every date can be read (the oracle split lists them out of
order); utterance ids are ``<session id>:<turn>`` with turns counted from 1 in the source.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..conversation import Conversation, Question
from .builder import MISSING, ConversationBuilder, FileContext, jpath

_TURN_FIELDS = ("role", "content")
_KNOWN = ("question_id", "question_type", "question", "answer", "question_date", "haystack_session_ids",
          "haystack_dates", "haystack_sessions", "answer_session_ids")


def is_longmemeval(item: Any) -> bool:
    return isinstance(item, dict) and "haystack_sessions" in item


def read_longmemeval(items: list[tuple[str, Any]], ctx: FileContext) -> Iterator[tuple[str, tuple, Any]]:
    for base, inst in items:
        ctx.expect(inst, dict, base, "a LongMemEval instance object")
        qid = ctx.id_field(inst.get("question_id", MISSING), jpath(base, "question_id"), "the question_id")
        yield qid, (), (lambda base=base, inst=inst, qid=qid: _instance(base, inst, qid, ctx))


def _parallel(inst: dict, key: str, n: int, base: str, ctx: FileContext) -> list | None:
    value = inst.get(key)
    if value is None:
        return None
    ctx.expect(value, list, jpath(base, key), "a list with one entry per haystack session")
    if len(value) != n:
        raise ctx.error(f"has {len(value)} entries for {n} haystack sessions; expected one per session",
                        jpath(base, key))
    return value


def _instance(base: str, inst: dict, qid: str, ctx: FileContext) -> Conversation:
    spath = jpath(base, "haystack_sessions")
    sessions = ctx.expect(inst.get("haystack_sessions", MISSING), list, spath, "a list of sessions (lists of turns)")
    n = len(sessions)
    ids = _parallel(inst, "haystack_session_ids", n, base, ctx)
    dates = _parallel(inst, "haystack_dates", n, base, ctx)
    b = ConversationBuilder(ctx, qid, "longmemeval", where=base)
    whens = [ctx.read_time(dates[i], jpath(jpath(base, "haystack_dates"), i), b.log) if dates else (None, None)
             for i in range(n)]
    order = list(range(n))
    if whens and all(w[0] for w in whens):
        order.sort(key=lambda i: whens[i][0])  # stable: equal times keep source order
    evidence: list[str] = []
    for i in order:
        path = jpath(spath, i)
        turns = ctx.expect(sessions[i], list, path, "a session: a list of {role, content} turns")
        sid = (ctx.id_field(ids[i], jpath(jpath(base, "haystack_session_ids"), i), "the session id")
               if ids else f"session_{i + 1}")
        session = b.new_session(sid, when=whens[i], where=path)
        for j, turn in enumerate(turns):
            tp = jpath(path, j)
            ctx.expect(turn, dict, tp, "a turn object with role and content")
            meta = {k: v for k, v in turn.items() if k not in _TURN_FIELDS}
            utt = b.add(session, speaker=turn.get("role", MISSING), text=turn.get("content", MISSING), where=tp,
                        speaker_where=jpath(tp, "role"), text_where=jpath(tp, "content"),
                        uid=f"{session.id}:{j + 1}", metadata=meta)
            if utt is not None and turn.get("has_answer") is True:
                evidence.append(utt.id)
    return b.finish(speakers=[], questions=[_question(base, inst, qid, evidence, ctx, b)],
                    metadata={k: v for k, v in inst.items() if k not in _KNOWN})


def _question(base: str, inst: dict, qid: str, evidence: list[str], ctx: FileContext, b) -> Question:
    question = ctx.text_field(inst.get("question", MISSING), jpath(base, "question"), "the question")
    answer = inst.get("answer")
    if answer is not None:
        answer = str(ctx.expect(answer, (str, int, float), jpath(base, "answer"), "the answer as text or a number"))
    qtype = inst.get("question_type", "")
    qtype = ctx.text_field(qtype, jpath(base, "question_type"), "the question_type")
    qdate, qdate_text = ctx.read_time(inst.get("question_date"), jpath(base, "question_date"), b.log)
    answer_sessions = inst.get("answer_session_ids") or []
    ctx.expect(answer_sessions, list, jpath(base, "answer_session_ids"), "a list of session ids")
    return Question(
        id=qid, question=question, answer=answer, category=qtype, evidence=evidence, question_date=qdate,
        metadata={"answer_session_ids": answer_sessions, "question_date_text": qdate_text,
                  "abstention": qid.endswith("_abs")},
    )
