"""Judging one answer against the gold answer with an LLM: a label, never an exception.

* LoCoMo (and custom question sets): ``prompts/judge.py``, CORRECT/WRONG with the leniency of the
  published Mem0/Zep protocol (same topic; any date format; relative time references that point at
  the gold's date). Category 5 (adversarial) has no gold answer: it is judged as an abstention
  question (correct only when the answer says the information is not there) and reported apart from J.
  Default judge model: gpt-4o-mini, the judge of the published LoCoMo J scores.
* LongMemEval: ``prompts/judge_longmemeval.py``, yes/no "does the response contain the correct
  answer", with the benchmark's per-type criteria (intermediate steps that reach the right answer,
  temporal off-by-one, latest value for knowledge updates, preference rubrics, abstention for
  ``_abs`` ids). Default judge model: gpt-4o, the benchmark's own.
* Any published judge, verbatim: ``load_judge_prompt(FILE)`` reads a template with the named
  placeholders ``{question}``, ``{gold}``, ``{answer}`` and optionally ``{question_type}``; the reply
  is free text and its verdict is read from it (yes/no, CORRECT/WRONG, or a JSON object with a
  ``label`` or ``verdict``).

A reply that is still malformed after the client's repair round, a reply without a verdict, or an
endpoint that fails after its retries, gives a ``Verdict`` with ``error`` set (recorded as
``judge_error``), never a crash.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import time
from pathlib import Path

from pydantic import BaseModel

from ...errors import InputError, LLMError
from ...llm.config import DEFAULT_MODEL
from ...prompts import PROMPTS, PromptTemplate
from ...prompts import judge_longmemeval
from ...prompts.base import Messages, escape_text
from .items import category_label

LOCOMO_ADVERSARIAL = "5"
CUSTOM_JUDGE = "judge_custom"
PLACEHOLDERS = ("question", "gold", "answer", "question_type")
REQUIRED_PLACEHOLDERS = ("question", "gold", "answer")
_MAX_TEMPLATE_CHARS = 100_000


class Verdict(BaseModel):
    correct: bool | None = None  # None: no verdict (see ``error``)
    label: str | None = None
    reasoning: str | None = None
    prompt: str = ""  # name@version of the judge prompt
    model: str | None = None
    error: str | None = None
    ms: float = 0.0


def default_judge_model(dataset: str) -> str:
    """The judge model each benchmark's published numbers were judged with."""
    return judge_longmemeval.DEFAULT_MODEL if dataset == "longmemeval" else DEFAULT_MODEL


def judge_prompt(dataset: str, custom: PromptTemplate | None = None) -> PromptTemplate:
    if custom is not None:
        return custom
    return judge_longmemeval.PROMPT if dataset == "longmemeval" else PROMPTS["judge"]


def judge_context(dataset: str, question: str, gold: str | None, answer: str, category: str = "",
                  abstention: bool = False, adversarial_answer: str | None = None) -> dict:
    """The judge prompt's context for one answer (every built-in and custom judge reads from it)."""
    if dataset == "longmemeval":
        return {"question": question, "gold": gold or "", "answer": answer, "question_type": category,
                "abstention": abstention}
    if abstention:
        gold = "The conversation does not contain this information, so the right answer says it is not available."
        if adversarial_answer:
            gold += f" (A misleading answer would be: {adversarial_answer}.)"

    qtype = category_label(dataset, category) if dataset == "locomo" else category
    return {"question": question, "gold": gold or "", "answer": answer, "question_type": qtype,
            "abstention": abstention}


# --- a user's own judge template ------------------------------------------------------------------------

def load_judge_prompt(path: str | Path) -> PromptTemplate:
    """A judge template from a text file, checked: every placeholder must be one of ``PLACEHOLDERS``, and
    question, gold and answer must all appear. Literal braces are written doubled (``{{`` and ``}}``), as in
    Python's ``str.format``. The version is a hash of the text, so a changed file never reuses cached verdicts."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the judge prompt: {err.strerror or err}", source=source) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"the judge prompt is not UTF-8 text (byte {err.start})", source=source) from None
    if not text.strip():
        raise InputError("the judge prompt is empty", source=source)
    if len(text) > _MAX_TEMPLATE_CHARS:
        raise InputError(f"the judge prompt has {len(text):,} characters; at most {_MAX_TEMPLATE_CHARS:,}",
                         source=source)
    used = _placeholders(text, source)
    unknown = sorted(used - set(PLACEHOLDERS))
    if unknown:
        raise InputError(f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}; known: "
                         f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}", source=source)
    missing = [p for p in REQUIRED_PLACEHOLDERS if p not in used]
    if missing:
        raise InputError(f"missing placeholder(s) {', '.join('{' + m + '}' for m in missing)}: the judge must see the "
                         "question, the gold answer and the answer to grade", source=source)
    version = hashlib.sha256(text.encode()).hexdigest()[:12]

    def render(context: dict) -> Messages:
        # The published judges put the texts in as they are; only '<' is shown as '‹' so that data can never
        # open or close a tag of the template's own.
        values = {p: escape_text(str(context.get(p) or "")) for p in PLACEHOLDERS}
        return [{"role": "user", "content": text.format(**values)}]

    return PromptTemplate(CUSTOM_JUDGE, version, render, None, f"judge prompt from {Path(path).name}")


def _placeholders(text: str, source: str) -> set[str]:
    names: set[str] = set()
    known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
    try:
        for _, field, spec, _ in string.Formatter().parse(text):
            if field is None:
                continue
            if not field or field.isdigit():
                raise InputError(f"unnamed placeholder {{{field}}}: name it, one of {known}", source=source)
            if not field.isidentifier() or spec:
                shown = "{" + field + (":" + spec if spec else "") + "}"
                raise InputError(f"{shown} is not a placeholder: use {known}, and write braces that belong to the "
                                 'text doubled ({{ and }}), e.g. {{"label": "CORRECT"}}', source=source)
            names.add(field)
    except ValueError as err:  # a lone '{' or '}'
        raise InputError(f"not a valid template: {err} (write braces that belong to the text doubled: {{{{ and }}}})",
                         source=source) from None
    return names


_VERDICT_WORD = re.compile(r"\b(yes|no|correct|incorrect|wrong)\b", re.I)
_POSITIVE = {"yes", "correct"}


def read_verdict(reply: str) -> tuple[bool, str] | None:
    """(correct, label) from a free-text judge reply: a JSON object with ``label``/``verdict``/``correct``,
    else the first verdict word (yes/no, CORRECT/WRONG/INCORRECT); None when the reply gives none."""
    start, end = reply.find("{"), reply.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(reply[start:end + 1])
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("label", "verdict", "correct", "answer"):
                value = data.get(key)
                if isinstance(value, bool):
                    return value, "yes" if value else "no"
                if isinstance(value, str) and _VERDICT_WORD.fullmatch(value.strip()):
                    word = value.strip()
                    return word.lower() in _POSITIVE, word
    match = _VERDICT_WORD.search(reply)
    if match is None:
        return None
    word = match.group(1)
    return word.lower() in _POSITIVE, word


# --- one verdict ---------------------------------------------------------------------------------------

def _is_correct(dataset: str, reply: BaseModel) -> tuple[bool, str]:
    if dataset == "longmemeval":
        return reply.verdict == "yes", reply.verdict
    return reply.label == "CORRECT", reply.label


def judge_answer(client, dataset: str, question: str, gold: str | None, answer: str | None, category: str = "",
                 abstention: bool = False, adversarial_answer: str | None = None,
                 prompt: PromptTemplate | None = None) -> Verdict:
    """One verdict; an empty answer is WRONG without asking the judge (it 'gives no answer').
    ``prompt``: a template from ``load_judge_prompt`` instead of the dataset's own judge."""
    prompt = judge_prompt(dataset, prompt)
    model = getattr(getattr(client, "config", None), "model", None)
    if not (answer or "").strip():
        return Verdict(correct=False, label="WRONG" if dataset != "longmemeval" else "no",
                       reasoning="empty answer", prompt=prompt.id, model=model)
    if gold is None and not abstention:
        return Verdict(prompt=prompt.id, model=model, error="no gold answer to judge against")
    context = judge_context(dataset, question, gold, answer, category, abstention, adversarial_answer)
    started = time.perf_counter()

    def took() -> float:
        return (time.perf_counter() - started) * 1000

    try:
        if prompt.response_model is None:  # a user's template: free text
            text = client.complete_text(prompt, context)
            found = read_verdict(text)
            if found is None:
                return Verdict(prompt=prompt.id, model=model, ms=took(),
                               error=f"the judge's reply gives no verdict (yes/no or CORRECT/WRONG): {text[:200]!r}")
            return Verdict(correct=found[0], label=found[1], reasoning=text.strip()[:500] or None, prompt=prompt.id,
                           model=model, ms=took())
        reply = client.complete_json(prompt, context)
    except LLMError as err:
        return Verdict(prompt=prompt.id, model=model, error=str(err), ms=took())
    correct, label = _is_correct(dataset, reply)
    return Verdict(correct=correct, label=label, reasoning=getattr(reply, "reasoning", None) or None,
                   prompt=prompt.id, model=model, ms=took())
