"""The results of an evaluation run: one JSON line per (question, variant), appended as it goes.

``<out>/results.jsonl`` holds ``ResultRow`` objects; ``<out>/run.json`` the run's settings
(``RunInfo``). The file is append-only: a rerun reads it, skips every (question, variant) already
done and appends the rest, so an interrupted run loses at most the rows still in flight. When a key
appears twice (a retried error), the last row wins.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, Field, ValidationError

from ...errors import InputError
from ...fileio import atomic_write_json

log = logging.getLogger("gravity_engine.eval.evaluate")

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
RESULTS_VERSION = 1


class ResultRow(BaseModel):
    """One question answered with one variant, judged, plus the LLM-free measures of its context."""

    results_version: int = RESULTS_VERSION
    dataset: str  # locomo | longmemeval | custom
    conversation_id: str
    question_id: str
    category: str  # LoCoMo "1".."5"; LongMemEval question_type; custom: as given
    category_label: str
    question: str
    gold: str | None = None
    question_date: str | None = None
    abstention: bool = False  # LongMemEval _abs ids and LoCoMo category 5
    host: str
    variant: str
    # The answer and its judgement. judge_correct is None when there is no verdict (judge_error).
    answer: str | None = None
    answer_model: str | None = None
    answer_error: str | None = None
    judge_correct: bool | None = None
    judge_label: str | None = None  # the judge's own word: CORRECT/WRONG or yes/no
    judge_reasoning: str | None = None
    judge_model: str | None = None
    judge_prompt: str | None = None  # name@version
    judge_error: str | None = None
    f1: float | None = None  # LoCoMo token F1 by its per-category rule
    # LLM-free measures of the context handed to the answer model (see gravity_engine.eval.measure).
    evidence_recall: float | None = None  # evidence ids among the memories in this variant's prompt
    evidence_recall_host: float | None = None  # ... among the host's own top-k (the baseline's memories)
    answer_covered: bool | None = None  # gold answer tokens present in this variant's prompt
    temporal_grounded: bool | None = None  # LoCoMo category 2: gold date among injected events
    n_expansions: int = 0
    injected_tokens: int = 0
    prompt_tokens: int = 0
    injected_anchor_ids: dict[str, list[str]] = Field(default_factory=dict)
    injected_context: str = ""  # the anchor (or +Sum) blocks as injected, for case studies
    timings_ms: dict[str, float] = Field(default_factory=dict)  # query, answer, judge

    @property
    def key(self) -> tuple[str, str]:
        return self.question_id, self.variant

    @property
    def done(self) -> bool:
        """Finished rows are skipped by a rerun; answer errors are retried (judge errors only on request)."""
        return self.answer_error is None


class RunInfo(BaseModel):
    """What a results folder holds: the settings of the run that wrote it."""

    results_version: int = RESULTS_VERSION
    dataset: str
    source: str
    host: str
    variants: list[str]
    answer_model: str | None = None
    judge_model: str | None = None
    endpoint: str | None = None
    backend: str = "classic"
    stores: str = ""
    include_adversarial: bool = True
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)


class ResultsFile:
    """Append-only JSONL of ``ResultRow``; thread-safe appends, each line flushed as soon as it is written."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fh = None

    def rows(self) -> list[ResultRow]:
        """Every row, last one per key winning; a torn last line (a killed run) is ignored."""
        latest: dict[tuple[str, str], ResultRow] = {}
        for row in self._iter():
            latest[row.key] = row
        return list(latest.values())

    def _iter(self) -> Iterator[ResultRow]:
        if not self.path.is_file():
            return
        with open(self.path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for i, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield ResultRow.model_validate_json(line)
            except ValidationError as err:
                if i == len(lines):  # a line cut short by a killed process: it is redone
                    log.warning("%s: ignoring a torn last line", self.path)
                    continue
                first = err.errors()[0]
                raise InputError(f"not a result row: {first['msg']} at {'.'.join(map(str, first['loc']))}",
                                 source=str(self.path), where=f"line {i}") from None

    def open(self) -> "ResultsFile":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()
        self._fh = open(self.path, "a", encoding="utf-8")
        return self

    def _drop_torn_tail(self) -> None:
        """Cut a last line without its newline, so the next append starts on a line of its own."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data.endswith(b"\n"):
                return
            fh.truncate(data.rfind(b"\n") + 1)

    def append(self, row: ResultRow) -> None:
        line = row.model_dump_json() + "\n"
        with self._lock:
            if self._fh is None:
                self.open()
            self._fh.write(line)
            # flush, not fsync: a killed process loses nothing flushed (the OS holds it); fsync per row
            # would only add power-loss safety at a cost that shows in the runner's overhead.
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> "ResultsFile":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


def read_run_info(folder: str | Path) -> RunInfo | None:
    path = Path(folder) / RUN_FILE
    if not path.is_file():
        return None
    try:
        return RunInfo.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as err:
        raise InputError(f"not a run description: {err}", source=str(path)) from None


def write_run_info(folder: str | Path, info: RunInfo) -> None:
    atomic_write_json(Path(folder) / RUN_FILE, info.model_dump(mode="json"))


def load_results(folder: str | Path) -> tuple[RunInfo | None, list[ResultRow]]:
    """A results folder (or a results.jsonl file) as its run info and rows."""
    folder = Path(folder)
    if folder.is_file():
        return read_run_info(folder.parent), ResultsFile(folder).rows()
    path = folder / RESULTS_FILE
    if not path.is_file():
        raise InputError(f"no {RESULTS_FILE} here; run `python -m gravity_engine evaluate ... --out {folder}` first",
                         source=str(folder))
    return read_run_info(folder), ResultsFile(path).rows()


def results_path(folder: str | Path) -> Path:
    return Path(folder) / RESULTS_FILE

