"""Extractors: the ``classic`` offline backend and the ``llm`` backend behind one protocol."""

from .base import DEFAULT_BATCH_SIZE, Batch, BatchAnchors, Extractor, make_batches

__all__ = ["DEFAULT_BATCH_SIZE", "Batch", "BatchAnchors", "Extractor", "make_batches"]
