"""The ``python -m gravity_engine`` command line. Each command group lives in its own module and
registers itself on ``app``; importing this package imports them all."""

from .app import app
from . import build_cmds  # noqa: F401  (registers build, show, verify)

__all__ = ["app"]
