"""The shared typer application and the one place CLI errors become a clear line and an exit code."""

from __future__ import annotations

import functools
import os
import sys
from typing import Callable

import typer

from ..errors import GravityError

app = typer.Typer(
    name="gravity_engine",
    help="Gravity: build entity, event and topic anchors from conversations and use them to improve any memory system's answers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# One-conversation builds are a single long batch job: on a quiet 2-core machine a classic build of conv-26
# took 22.0 s with 2 torch threads against 29.6 s with 1 (embedding 5.3 s against 10.0 s). Query and
# serving commands keep threads.py's default of 1 (many small encodes beside other work).
_ALL_CORES_COMMANDS = {"build", "build-ideal"}


@app.callback()
def _start(
    ctx: typer.Context,
    llm_json_mode: str = typer.Option(None, help="auto, json_schema, json_object_schema, json_object or prompt "
                                                  "(env GRAVITY_LLM_JSON_MODE)."),
    llm_concurrency: int = typer.Option(None, help="Most LLM requests in flight (env GRAVITY_LLM_CONCURRENCY)."),
    llm_timeout: float = typer.Option(None, help="Seconds without a token before a request is retried "
                                                 "(env GRAVITY_LLM_TIMEOUT)."),
    llm_gguf: str = typer.Option(None, help="A GGUF model file to serve locally with llama.cpp (env GRAVITY_LLM_GGUF)."),
) -> None:
    """Process start: thread limits are set here, once, before any command starts a worker thread;
    the --llm-* options become this process's GRAVITY_LLM_* settings."""
    from ..llm.settings import apply_cli_options
    from ..threads import TORCH_ENV, configure

    try:
        torch_threads = None
        if ctx.invoked_subcommand in _ALL_CORES_COMMANDS and not os.environ.get(TORCH_ENV, "").strip():
            torch_threads = os.cpu_count() or 1
        configure(torch_threads=torch_threads)
        apply_cli_options(json_mode=llm_json_mode, concurrency=llm_concurrency, timeout=llm_timeout, gguf=llm_gguf)
    except GravityError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2) from None


def friendly_errors(fn: Callable) -> Callable:
    """Turn a GravityError into one red line on stderr and exit code 2 (never a traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GravityError as err:
            typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
            raise typer.Exit(code=2) from None
        except KeyboardInterrupt:
            typer.secho("interrupted; finished batches are saved, run the same command again to resume", err=True)
            raise typer.Exit(code=130) from None

    return wrapper


def echo_err(message: str) -> None:
    print(message, file=sys.stderr)
