"""Settings of an OpenAI-compatible endpoint: where it is, which model, how patient to be.

The API key is a ``SecretStr``: it never appears in ``repr``, logs, dumps or files. Only the
client reads its value, at the moment it builds the HTTP client.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError

from ..errors import ConfigError
from ..paths import gravity_home
from .endpoints import JSON_MODES
from .env import NO_KEY, parse_setting
from .local_server import local_model_settings

DEFAULT_MODEL = "gpt-4o-mini"  # the paper's extraction backbone; cheap enough for whole conversations
OPENAI_BASE_URL = "https://api.openai.com/v1"


class NoEndpointConfigured(ConfigError):
    """Nothing says where a model is: the one case where callers may go on offline."""


JsonMode = Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"]
assert set(JsonMode.__args__) == {"auto", *JSON_MODES}  # one list of modes, two spellings

# Environment variables of the settings that are not the endpoint itself: name -> (field, parser).
ENV_SETTINGS = {
    "GRAVITY_LLM_TEMPERATURE": ("temperature", float), "GRAVITY_LLM_TIMEOUT": ("timeout", float),
    "GRAVITY_LLM_MAX_RETRIES": ("max_retries", int), "GRAVITY_LLM_CONCURRENCY": ("concurrency", int),
    "GRAVITY_LLM_MAX_TOKENS": ("max_tokens", int), "GRAVITY_LLM_JSON_MODE": ("json_mode", str),
    "GRAVITY_LLM_STREAM": ("stream", "bool"), "GRAVITY_LLM_STALL_TIMEOUT": ("stall_timeout", float),
}


def default_cache_dir() -> Path:
    return gravity_home() / "llm_cache"


class LLMConfig(BaseModel):
    """One endpoint and how to talk to it. ``temperature=0`` keeps extraction reproducible and cacheable."""

    base_url: str = OPENAI_BASE_URL
    api_key: SecretStr = SecretStr(NO_KEY)
    model: str = DEFAULT_MODEL
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout: float = Field(120.0, gt=0, description=(
        "seconds without progress before a request is abandoned: waiting for the first token (queue and "
        "prompt reading included) or between two tokens. Replies are streamed, so a generation that keeps "
        "producing tokens is never cut by this"))
    max_retries: int = Field(4, ge=0, le=20, description="retries after the first attempt (429, 5xx, timeouts)")
    backoff_base: float = Field(1.0, ge=0, description="first backoff in seconds; doubles per retry")
    backoff_max: float = Field(30.0, ge=0, description="cap on one backoff and on an honoured Retry-After")
    concurrency: int = Field(4, ge=1, le=64, description=(
        "most requests in flight to this endpoint; fewer after timeouts, stalled or dropped streams, back up "
        "after successes. Left unset (auto), the client starts at the server's slots (llama.cpp's /props), "
        "else at 2, and adapts up to this"))
    max_tokens: int | None = Field(4096, ge=1, description="cap on completion tokens per call")
    json_mode: JsonMode = Field("auto", description=(
        "structured output to ask for first: auto (json_schema, then whatever the endpoint accepts), "
        "json_schema, json_object_schema (llama.cpp grammar), json_object, or prompt (schema in the prompt)"))
    stream: bool = Field(True, description=(
        "stream replies (the timeout then applies per token, not per reply); a server that rejects stream is "
        "asked without it, and a complete JSON reply to a streamed request is accepted"))
    stall_timeout: float = Field(30.0, gt=0, description=(
        "seconds a stream may wait for its first token while requests to the endpoint sent before it are in "
        "flight (at least 3x the median first-token time so far) before it counts as queued behind them: it "
        "is abandoned, retried, and the concurrency halves"))
    cache: bool = True
    cache_dir: Path = Field(default_factory=default_cache_dir)
    local_model: Path | None = Field(None, description="the GGUF file behind a local llama.cpp server, if any")

    @classmethod
    def from_env(cls, **overrides) -> "LLMConfig":
        """Read GRAVITY_LLM_BASE_URL, GRAVITY_LLM_API_KEY (or OPENAI_API_KEY), GRAVITY_LLM_MODEL,
        GRAVITY_LLM_GGUF (a model file served locally) and the settings in ``ENV_SETTINGS``.

        A setting that cannot be read is a ``ConfigError`` naming it; ``NoEndpointConfigured`` only
        when nothing says where a model is.
        """
        env = os.environ
        values: dict = env_settings(env)
        gguf = env.get("GRAVITY_LLM_GGUF", "").strip()
        base_url = env.get("GRAVITY_LLM_BASE_URL", "").strip()
        key = (env.get("GRAVITY_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "").strip()
        if gguf and "base_url" not in overrides:
            values = local_model_settings(gguf) | values
            overrides = {k: v for k, v in overrides.items() if k != "model"}  # the file is the model
        elif not base_url and not key and "base_url" not in overrides and "api_key" not in overrides:
            raise NoEndpointConfigured(
                "no LLM endpoint configured: set GRAVITY_LLM_API_KEY (or OPENAI_API_KEY) for OpenAI, "
                "GRAVITY_LLM_BASE_URL for another OpenAI-compatible server (Ollama, vLLM, LM Studio, ...) or "
                "GRAVITY_LLM_GGUF for a model file on disk; optionally GRAVITY_LLM_MODEL (default " + DEFAULT_MODEL + ")"
            )
        else:
            values |= {"base_url": base_url or OPENAI_BASE_URL, "api_key": key or NO_KEY,
                       "model": env.get("GRAVITY_LLM_MODEL", "").strip() or DEFAULT_MODEL}
        values.update(overrides)
        return cls.build(**values)

    @classmethod
    def build(cls, **values) -> "LLMConfig":
        """Construct and turn pydantic's validation error into a one-line ``ConfigError``."""
        try:
            return cls(**values)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"invalid LLM setting {where}={first.get('input')!r}: {first['msg']}") from None

    @property
    def concurrency_is_auto(self) -> bool:
        """Concurrency left unset: the client finds the server's slots (or starts at 2) and adapts."""
        return "concurrency" not in self.model_fields_set

    def has_key(self) -> bool:
        return self.api_key.get_secret_value() not in ("", NO_KEY)

    def endpoint_label(self) -> str:
        """The base URL with any user:password part removed, safe to show and to record in build info."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def public_dict(self) -> dict:
        """Everything but the key: what build reports and the settings page may show."""
        return {"base_url": self.endpoint_label(), "model": self.model, "temperature": self.temperature,
                "timeout": self.timeout, "max_retries": self.max_retries, "concurrency": self.concurrency,
                "concurrency_auto": self.concurrency_is_auto, "json_mode": self.json_mode, "stream": self.stream,
                "local_model": str(self.local_model) if self.local_model else None, "api_key_set": self.has_key()}


def env_settings(env) -> dict:
    """The non-endpoint settings set in ``env`` (``ENV_SETTINGS``), parsed; each bad one named."""
    values: dict = {}
    for var, (field, kind) in ENV_SETTINGS.items():
        raw = env.get(var, "").strip()
        if field == "concurrency" and raw.lower() == "auto":
            continue  # unset is auto
        if raw:
            values[field] = parse_setting(var, raw, kind)
    return values
