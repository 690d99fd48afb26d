"""The build phase: conversation -> batches -> extractor -> consolidation (``consolidate``) -> verification
(``verify``) -> embeddings -> store, as named steps (``pipeline``)."""

from .pipeline import (BACKENDS, CHECKPOINT_DIR, BuildCancelled, BuildProgress, build_store, estimate_build,
                       make_extractor, speaker_neutral)
from .stores import ensure_store, ensure_stores

__all__ = ["BACKENDS", "CHECKPOINT_DIR", "BuildCancelled", "BuildProgress", "build_store", "ensure_store",
           "ensure_stores", "estimate_build", "make_extractor", "speaker_neutral"]
