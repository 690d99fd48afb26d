"""Judging one answer against the gold answer with an LLM: a label, never an exception.

* LoCoMo (and custom question sets): ``prompts/judge.py``, CORRECT/WRONG, generous on topic and on
  date formats. Category 5 (adversarial) has no gold answer: it is judged as an abstention question
  (correct only when the answer says the information is not there) and reported apart from J.
* LongMemEval: ``prompts/judge_longmemeval.py``, yes/no "does the response contain the correct
  answer", with the per-type rules (temporal off-by-one, knowledge updates, preference rubrics) and
  abstention for ``_abs`` ids.

A reply that is still malformed after the client's repair round, or an endpoint that fails after its
retries, gives a ``Verdict`` with ``error`` set (recorded as ``judge_error``), never a crash.
"""

from __future__ import annotations

import time

from pydantic import BaseModel

from ..errors import LLMError
from ..prompts import PROMPTS, PromptTemplate
from ..prompts import judge_longmemeval

LOCOMO_ADVERSARIAL = "5"


class Verdict(BaseModel):
    correct: bool | None = None  # None: no verdict (see ``error``)
    label: str | None = None
    reasoning: str | None = None
    prompt: str = ""  # name@version of the judge prompt
    model: str | None = None
    error: str | None = None
    ms: float = 0.0


def judge_prompt(dataset: str) -> PromptTemplate:
    return judge_longmemeval.PROMPT if dataset == "longmemeval" else PROMPTS["judge"]


def judge_context(dataset: str, question: str, gold: str | None, answer: str, category: str = "",
                  abstention: bool = False, adversarial_answer: str | None = None) -> dict:
    """The judge prompt's context for one answer."""
    if dataset == "longmemeval":
        return {"question": question, "gold": gold or "", "answer": answer, "question_type": category,
                "abstention": abstention}
    if abstention:
        gold = "The conversation does not contain this information, so the right answer says it is not available."
        if adversarial_answer:
            gold += f" (A misleading answer would be: {adversarial_answer}.)"
    return {"question": question, "gold": gold or "", "answer": answer, "abstention": abstention}


def _is_correct(dataset: str, reply: BaseModel) -> tuple[bool, str]:
    if dataset == "longmemeval":
        return reply.verdict == "yes", reply.verdict
    return reply.label == "CORRECT", reply.label


def judge_answer(client, dataset: str, question: str, gold: str | None, answer: str | None, category: str = "",
                 abstention: bool = False, adversarial_answer: str | None = None) -> Verdict:
    """One verdict; an empty answer is WRONG without asking the judge (it 'gives no answer')."""
    prompt = judge_prompt(dataset)
    model = getattr(getattr(client, "config", None), "model", None)
    if not (answer or "").strip():
        return Verdict(correct=False, label="WRONG" if dataset != "longmemeval" else "no",
                       reasoning="empty answer", prompt=prompt.id, model=model)
    if gold is None and not abstention:
        return Verdict(prompt=prompt.id, model=model, error="no gold answer to judge against")
    context = judge_context(dataset, question, gold, answer, category, abstention, adversarial_answer)
    started = time.perf_counter()
    try:
        reply = client.complete_json(prompt, context)
    except LLMError as err:
        return Verdict(prompt=prompt.id, model=model, error=str(err), ms=(time.perf_counter() - started) * 1000)
    correct, label = _is_correct(dataset, reply)
    return Verdict(correct=correct, label=label, reasoning=getattr(reply, "reasoning", None) or None,
                   prompt=prompt.id, model=model, ms=(time.perf_counter() - started) * 1000)
