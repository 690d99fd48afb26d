"""Which model answers, and whether it is tiny: what the app shows next to every model answer.

A model under a billion parameters (SmolLM2-135M, Qwen2.5-0.5B, ...) is a test server and a smoke
demo, not a judge of Gravity: its answers with and without anchors are mostly wrong for reasons that
have nothing to do with the context. ``describe_model(config).warning`` says so.

Parameter counts come from a GGUF file's own metadata (``general.size_label``, read with
llama-cpp-python without loading the weights), else from the model name ("360M", "0.5b", "7B").
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from functools import lru_cache
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

TINY_PARAMS = 1e9
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([mMbB])(?![a-zA-Z])")


@dataclass
class ModelInfo:
    name: str  # what the endpoint calls it (a local file's alias is its file name without .gguf)
    params: float | None = None  # parameters, when known
    source: str = "endpoint"  # "endpoint" or "local file"
    path: Path | None = None
    context_length: int | None = None
    endpoint: str = ""

    @property
    def tiny(self) -> bool:
        return self.params is not None and self.params < TINY_PARAMS

    @property
    def params_label(self) -> str:
        if self.params is None:
            return "size unknown"
        return f"{self.params / 1e9:g}B parameters" if self.params >= 1e9 else f"{self.params / 1e6:g}M parameters"

    @property
    def label(self) -> str:
        """"SmolLM2-135M-Instruct.Q4_1 (local file, 135M parameters)" - safe to show (no key, no credentials)."""
        where = "local file" if self.source == "local file" else self.endpoint or "endpoint"
        return f"{self.name} ({where}, {self.params_label})"

    @property
    def warning(self) -> str | None:
        if not self.tiny:
            return None
        return (f"{self.name} is a tiny model ({self.params_label}): its answers test the plumbing, they are "
                "not evidence for or against Gravity. Use a model of 7B parameters or more to compare answers.")


def params_from_name(name: str) -> float | None:
    """"SmolLM2-135M-Instruct" -> 1.35e8, "qwen2.5:0.5b" -> 5e8, "gpt-4o-mini" -> None."""
    found = None
    for number, unit in _SIZE.findall(name or ""):
        found = float(number) * (1e6 if unit in "mM" else 1e9)
    return found


@lru_cache(maxsize=16)
def _gguf_metadata(path: Path, _mtime: float = 0.0) -> dict[str, str]:
    """The file's key/value metadata via llama-cpp-python, weights not loaded; {} when it is not installed.
    (Cached per path and modification time: pages ask on every rerun.)"""
    try:
        from llama_cpp import Llama
    except ImportError:
        return {}
    try:
        from llama_cpp._utils import suppress_stdout_stderr  # the C library prints while it reads

        quiet = suppress_stdout_stderr(disable=False)
    except ImportError:  # pragma: no cover - a llama-cpp-python without the helper
        quiet = nullcontext()
    try:
        with quiet:
            return dict(Llama(model_path=str(path), vocab_only=True, verbose=False).metadata)
    except Exception as err:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError for bad files
        raise ConfigError(f"{path}: llama.cpp cannot read this model file: {err}") from None


def describe_file(path: str | Path) -> ModelInfo:
    """A GGUF model file checked (exists, is GGUF) and described; ``ConfigError`` says what is wrong."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"local model file {p} does not exist" if not p.exists() else f"{p} is not a file")
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except OSError as err:
        raise ConfigError(f"cannot read the local model file {p}: {err}") from None
    if magic != b"GGUF":
        raise ConfigError(f"{p} is not a GGUF model file (llama.cpp's format; it starts with {magic!r}, not b'GGUF')")
    meta = _gguf_metadata(p.resolve(), p.stat().st_mtime)
    arch = meta.get("general.architecture", "")
    context = meta.get(f"{arch}.context_length")
    name = p.name[:-5] if p.name.lower().endswith(".gguf") else p.name
    params = params_from_name(meta.get("general.size_label", "")) or params_from_name(name)
    return ModelInfo(name=name, params=params, source="local file", path=p.resolve(),
                     context_length=int(context) if context and context.isdigit() else None)


def describe_model(config) -> ModelInfo:
    """The model a config talks to: its name, size if known, and where it runs (no secrets)."""
    if getattr(config, "local_model", None):
        info = describe_file(config.local_model)
        info.name = config.model or info.name
        info.endpoint = config.endpoint_label()
        return info
    return ModelInfo(name=config.model, params=params_from_name(config.model), endpoint=config.endpoint_label())
