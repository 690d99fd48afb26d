"""Benchmark questions in, ``EvalItem``s out: LoCoMo, LongMemEval, or any conversation plus a questions file."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ...conversation import Conversation, Question
from ...errors import InputError
from ...loaders import load_conversations
from ..summary import LOCOMO_CATEGORIES, LONGMEMEVAL_TYPES

DATASETS = ("locomo", "longmemeval", "custom")
CATEGORY_MAPPING = ("LoCoMo categories by their JSON number: 1 multi-hop, 2 temporal, 3 open-domain, "
                    "4 single-hop, 5 adversarial (left out of J and reported apart).")


@dataclass
class EvalItem:
    conversation: Conversation
    question: Question

    @property
    def key(self) -> str:
        return self.question.id


def category_label(dataset: str, category: str) -> str:
    """'2 temporal' for LoCoMo, 'TR' for LongMemEval types, the category itself otherwise."""
    if dataset == "locomo":
        return f"{category} {LOCOMO_CATEGORIES.get(category, '?')}"
    if dataset == "longmemeval":
        return LONGMEMEVAL_TYPES.get(category, category)
    return category or "all"


def is_abstention(dataset: str, q: Question) -> bool:
    if dataset == "locomo":
        return q.category == "5"
    if dataset == "longmemeval":
        return bool(q.metadata.get("abstention")) or q.id.endswith("_abs")
    return bool(q.metadata.get("abstention"))


class _QuestionRecord(BaseModel):
    question: str
    answer: str | int | float | None = None
    id: str | None = None
    category: str | int = ""
    evidence: list[str] = []
    question_date: str | None = None
    abstention: bool = False
    explanation: str = ""  # a longer gold answer for people; the short ``answer`` is what is judged


def read_questions_file(path: Path) -> list[Question]:
    """A JSON array of {question, answer, id?, category?, evidence?, question_date?, abstention?}."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", source=str(path)) from None
    except ValueError as err:
        raise InputError(f"not valid JSON: {err}", source=str(path)) from None
    if not isinstance(data, list):
        raise InputError("expected a JSON array of question objects", source=str(path))
    out = []
    for i, item in enumerate(data):
        try:
            rec = _QuestionRecord.model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            raise InputError(f"{first['msg']} ({'.'.join(map(str, first['loc'])) or 'item'})", source=str(path),
                             where=f"[{i}]") from None
        out.append(Question(id=rec.id or f"q{i + 1}", question=rec.question,
                            answer=None if rec.answer is None else str(rec.answer), category=str(rec.category),
                            evidence=rec.evidence, question_date=rec.question_date,
                            metadata={"abstention": rec.abstention, "explanation": rec.explanation}))
    return out


def load_items(dataset: str, path: str | Path, conversation: str | None = None, questions: str | Path | None = None,
               include_adversarial: bool = True) -> list[EvalItem]:
    """Every question of ``path`` with its conversation, in file order."""
    dataset = dataset.lower()
    if dataset not in DATASETS:
        raise InputError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}", source=str(path))
    convs = load_conversations(path, conversation=conversation)
    if not convs:
        raise InputError("no conversation" + (f" with id {conversation!r}" if conversation else ""), source=str(path))
    if dataset in ("locomo", "longmemeval") and convs[0].format != dataset:
        raise InputError(f"this file reads as {convs[0].format or 'another format'}, not {dataset}", source=str(path))
    if dataset == "custom":
        qpath = Path(questions) if questions else Path(path).with_suffix(".questions.json")
        if questions or qpath.is_file():
            if len(convs) != 1:
                raise InputError(f"a questions file needs exactly one conversation; this file has {len(convs)}: "
                                 "choose one with --conversation", source=str(path))
            convs[0].questions = read_questions_file(qpath)
    items = []
    for conv in convs:
        for q in conv.questions:
            if dataset == "locomo" and q.category == "5" and not include_adversarial:
                continue
            if q.answer is None and not is_abstention(dataset, q):
                continue  # nothing to judge against
            items.append(EvalItem(conv, q))
    if not items:
        raise InputError("no question with a gold answer to evaluate" + (
            "; give a questions file with --questions" if dataset == "custom" else ""), source=str(path))
    return items


def select_items(items: list[EvalItem], limit: int | None = None, sample: int | None = None,
                 seed: int = 0) -> list[EvalItem]:
    """The first ``limit`` items, or a seeded random ``sample`` kept in file order (a stable slice to rerun)."""
    if sample is not None and sample < len(items):
        chosen = set(random.Random(seed).sample(range(len(items)), sample))
        items = [it for i, it in enumerate(items) if i in chosen]
    if limit is not None:
        items = items[:limit]
    return items
