"""The ``python -m gravity_engine`` command line. Each command group lives in its own module and
registers itself on ``app``; importing this package imports them all."""

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
