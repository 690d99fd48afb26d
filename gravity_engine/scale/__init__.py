"""Corpus scale: one store per conversation of a dataset or folder, on local worker processes or Ray,
optionally with the llm backend's extraction sent through a provider batch API first.

    corpus = load_corpus("../shared/data/longmemeval/longmemeval_oracle.json", limit=20)
    summary = build_corpus(corpus.conversations, "runs/lme", workers=2)     # or ray="local"
    print(summary.table())

Worker processes start from a fork server that re-imports the calling script's ``__main__`` module, as
with Python's spawn method: a script that calls ``build_corpus(..., workers=2)`` keeps its work under
``if __name__ == "__main__":``.
"""

from .corpus import Corpus, load_corpus
from .jobs import BuildJob, BuildOptions, JobResult, store_state
from .run import RunSummary, build_corpus, build_missing, write_summary

__all__ = ["BuildJob", "BuildOptions", "Corpus", "JobResult", "RunSummary", "build_corpus", "build_missing",
           "load_corpus", "store_state", "write_summary"]
