"""Benchmark evaluation: the runner (answers + LLM judge per question and variant), token F1,
statistics (accuracy, ablations, gain/loss, Jaccard, regression) and the Markdown report."""

from .f1 import locomo_f1, normalize_tokens, token_f1
from .items import CATEGORY_MAPPING, DATASETS, EvalItem, load_items, select_items
from .judge import Verdict, judge_answer
from .report import REAL_MODEL_NOTE, Report, build_report
from .results import ResultRow, ResultsFile, RunInfo, load_results
from .runner import (DEFAULT_JUDGE_MODEL, EvalPlan, EvalSettings, EvalSummary, make_eval_clients, plan_evaluation,
                     run_evaluation)
from .stats import gain_loss, jaccard, regression, score_table

__all__ = [
    "CATEGORY_MAPPING", "DATASETS", "DEFAULT_JUDGE_MODEL", "REAL_MODEL_NOTE", "EvalItem", "EvalPlan", "EvalSettings",
    "EvalSummary", "Report", "ResultRow", "ResultsFile", "RunInfo", "Verdict", "build_report", "gain_loss", "jaccard",
    "judge_answer", "load_items", "load_results", "locomo_f1", "make_eval_clients", "normalize_tokens",
    "plan_evaluation", "regression", "run_evaluation", "score_table", "select_items", "token_f1",
]
