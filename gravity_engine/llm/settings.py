"""The LLM settings a person types (the app's Settings page) turned into an ``LLMConfig``.

    config = config_from_settings({"preset": "Ollama", "model": "llama3.1", "concurrency": "2"})

Typed values win over the environment (``GRAVITY_LLM_*``); empty ones fall back to it. Each bad value
is a ``ConfigError`` that names the setting and says what is expected; ``None`` means only that
nothing anywhere says where a model is (the app then works offline).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import ConfigError
from .config import OPENAI_BASE_URL, LLMConfig, NoEndpointConfigured, parse_setting
from .local_server import local_model_settings
from .models import describe_file


@dataclass(frozen=True)
class Preset:
    """Where a kind of server listens by default and what suits it."""

    name: str
    base_url: str
    json_mode: str
    concurrency: int
    needs_key: bool
    note: str


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("OpenAI", OPENAI_BASE_URL, "json_schema", 8, True,
           "Structured outputs (json_schema); rate limits allow several requests at once."),
    Preset("Ollama", "http://127.0.0.1:11434/v1", "auto", 1, False,
           "`ollama serve`; model names as in `ollama list` (e.g. llama3.1:8b). One request at a time unless "
           "OLLAMA_NUM_PARALLEL is set."),
    Preset("LM Studio", "http://127.0.0.1:1234/v1", "json_schema", 1, False,
           "The local server of LM Studio (Developer tab); model name as loaded there."),
    Preset("vLLM", "http://127.0.0.1:8000/v1", "json_schema", 8, False,
           "`vllm serve MODEL`: batches many requests at once; guided decoding for json_schema."),
    Preset("llama.cpp", "http://127.0.0.1:8080/v1", "json_object_schema", 1, False,
           "`llama-server -m FILE.gguf` (port 8080) or `python -m llama_cpp.server` (port 8000): one slot by "
           "default; llama-cpp-python rejects json_schema, json_object with a schema is grammar-constrained."),
)}

# Setting name -> (label on the Settings page, parser). Labels are what an error message names.
TYPED = {"concurrency": ("Concurrency", int), "timeout": ("Timeout (s)", float),
         "temperature": ("Temperature", float), "max_tokens": ("Max tokens", int), "json_mode": ("JSON mode", str)}


def _typed(settings: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, (label, kind) in TYPED.items():
        raw = settings.get(key)
        if raw is None or str(raw).strip() == "":
            continue
        if isinstance(raw, (int, float)) and not isinstance(raw, bool) and kind in (int, float):
            values[key] = kind(raw)
        else:
            values[key] = parse_setting(f"Settings › {label}", str(raw), kind, sep=": ")
    return values


def _check(values: dict[str, Any]) -> LLMConfig:
    """Build, naming the Settings label of a field pydantic rejects."""
    try:
        return LLMConfig.build(**values)
    except ConfigError as err:
        for key, (label, _) in TYPED.items():
            if f"setting {key}=" in str(err):
                raise ConfigError(str(err).replace(f"invalid LLM setting {key}=", f"Settings › {label}: ")) from None
        raise


def config_from_settings(settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> LLMConfig | None:
    """Settings (``preset``, ``base_url``, ``api_key``, ``model``, ``local_model`` and the ``TYPED`` ones)
    over the environment; see the module docstring."""
    env = os.environ if env is None else env
    text = {k: str(v).strip() for k, v in settings.items() if isinstance(v, str)}
    typed = _typed(settings)
    preset = PRESETS.get(text.get("preset", ""))
    if text.get("preset") and preset is None:
        raise ConfigError(f"Settings › Preset: unknown {text['preset']!r} (one of {', '.join(PRESETS)})")
    if text.get("local_model"):
        return _check(local_model_settings(text["local_model"]) | typed)
    url = text.get("base_url", "")
    if url and not (url.startswith(("http://", "https://")) and len(url) > len("https://")):
        raise ConfigError(f"Settings › Base URL: {url!r} is not an http(s) URL (e.g. http://127.0.0.1:11434/v1)")
    if text.get("base_url") or text.get("api_key") or preset is not None:
        values: dict[str, Any] = {}
        if preset is not None:
            values |= {"base_url": preset.base_url, "json_mode": preset.json_mode, "concurrency": preset.concurrency}
        values |= {k: text[k] for k in ("base_url", "api_key", "model") if text.get(k)}
        if preset is not None and preset.needs_key and not text.get("api_key"):
            key = (env.get("GRAVITY_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "").strip()
            if not key:
                raise ConfigError(f"Settings › API key: the {preset.name} preset needs a key (or set OPENAI_API_KEY)")
            values["api_key"] = key
        return _check(values | typed)
    overrides = typed | ({"model": text["model"]} if text.get("model") else {})
    try:
        return LLMConfig.from_env(**overrides)
    except NoEndpointConfigured:
        return None


def masked_key(key: str) -> str:
    """A key as the Settings page may show it back: never in full ("sk-…WXYZ", or "set" for short keys)."""
    key = key.strip()
    if not key:
        return ""
    return f"{key[:3]}…{key[-4:]}" if len(key) >= 16 else "set (hidden)"


# CLI option -> environment variable: global options are the environment for this one process.
CLI_ENV = {"json_mode": "GRAVITY_LLM_JSON_MODE", "concurrency": "GRAVITY_LLM_CONCURRENCY",
           "timeout": "GRAVITY_LLM_TIMEOUT", "gguf": "GRAVITY_LLM_GGUF"}


def apply_cli_options(**options: Any) -> None:
    """``--llm-json-mode`` and friends: checked now (a bad one is a ``ConfigError`` naming the option),
    then set as ``GRAVITY_LLM_*`` for this process, so every command reads them as it reads the environment."""
    given = {k: v for k, v in options.items() if v is not None and str(v).strip() != ""}
    unknown = set(given) - set(CLI_ENV)
    if unknown:
        raise ConfigError(f"unknown LLM option(s): {', '.join(sorted(unknown))}")
    for key, value in given.items():
        if key == "gguf":
            continue
        try:
            LLMConfig.build(**{key: value})
        except ConfigError as err:
            reason = str(err).split(": ", 1)[-1]
            raise ConfigError(f"--llm-{key.replace('_', '-')} {value!r}: {reason}") from None
    if "gguf" in given:
        describe_file(given["gguf"])  # the file is checked now; its server starts when a command needs it
    for key, value in given.items():
        os.environ[CLI_ENV[key]] = str(value)
