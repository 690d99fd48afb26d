"""The build phase: conversation -> batches -> extractor -> consolidation (``consolidate``) -> verification
(``verify``) -> embeddings -> store, as named steps (``pipeline``)."""

from .pipeline import (BACKENDS, CHECKPOINT_DIR, BuildCancelled, BuildProgress, build_store, estimate_build,
                       make_extractor, speaker_neutral)

__all__ = ["BACKENDS", "CHECKPOINT_DIR", "BuildCancelled", "BuildProgress", "build_store", "estimate_build",
           "make_extractor", "speaker_neutral"]
