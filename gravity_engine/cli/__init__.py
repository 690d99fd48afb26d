"""The ``python -m gravity_engine`` command line. Each command group lives in its own module and
registers itself on ``app``; importing this package imports them all.

The one place the engine is imported inside functions on purpose: each command imports what it uses in its own
body, so ``gravity --help`` and a single command load only their part of the engine (``--help`` starts in 0.4 s
here, 1.2 s with every command's imports at the top of its module)."""

from . import (  # noqa: F401  (register their commands)
    build_cmds,
    curate_cmds,
    eval_cmds,
    gold_cmds,
    ideal_cmds,
    query_cmds,
    scale_cmds,
)
from .app import app

__all__ = ["app"]
