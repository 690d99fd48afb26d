"""Settings of an OpenAI-compatible endpoint: where it is, which model, how patient to be.

The API key is a ``SecretStr``: it never appears in ``repr``, logs, dumps or files. Only the
client reads its value, at the moment it builds the HTTP client.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError

from ..errors import ConfigError

DEFAULT_MODEL = "gpt-4o-mini"  # the paper's extraction backbone; cheap enough for whole conversations
OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the openai package insists on one.
NO_KEY = "no-key-needed"


def gravity_home() -> Path:
    """The engine's own folder for caches and settings: ``$GRAVITY_HOME`` or ``~/.gravity``."""
    return Path(os.environ.get("GRAVITY_HOME") or Path.home() / ".gravity").expanduser()


def default_cache_dir() -> Path:
    return gravity_home() / "llm_cache"


class LLMConfig(BaseModel):
    """One endpoint and how to talk to it. ``temperature=0`` keeps extraction reproducible and cacheable."""

    base_url: str = OPENAI_BASE_URL
    api_key: SecretStr = SecretStr(NO_KEY)
    model: str = DEFAULT_MODEL
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout: float = Field(120.0, gt=0, description="seconds per HTTP request")
    max_retries: int = Field(4, ge=0, le=20, description="retries after the first attempt (429, 5xx, timeouts)")
    backoff_base: float = Field(1.0, ge=0, description="first backoff in seconds; doubles per retry")
    backoff_max: float = Field(30.0, ge=0, description="cap on one backoff and on an honoured Retry-After")
    concurrency: int = Field(4, ge=1, le=64, description="batches extracted at once")
    max_tokens: int | None = Field(4096, ge=1, description="cap on completion tokens per call")
    cache: bool = True
    cache_dir: Path = Field(default_factory=default_cache_dir)

    @classmethod
    def from_env(cls, **overrides) -> "LLMConfig":
        """Read GRAVITY_LLM_BASE_URL, GRAVITY_LLM_API_KEY (or OPENAI_API_KEY), GRAVITY_LLM_MODEL and friends.

        Raises ``ConfigError`` when neither an endpoint nor a key is set.
        """
        env = os.environ
        base_url = env.get("GRAVITY_LLM_BASE_URL", "").strip()
        key = (env.get("GRAVITY_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "").strip()
        if not base_url and not key and "base_url" not in overrides and "api_key" not in overrides:
            raise ConfigError(
                "no LLM endpoint configured: set GRAVITY_LLM_API_KEY (or OPENAI_API_KEY) for OpenAI, or "
                "GRAVITY_LLM_BASE_URL for another OpenAI-compatible server (Ollama, vLLM, LM Studio, ...); "
                "optionally GRAVITY_LLM_MODEL (default " + DEFAULT_MODEL + ")"
            )
        values: dict = {"base_url": base_url or OPENAI_BASE_URL, "api_key": key or NO_KEY,
                        "model": env.get("GRAVITY_LLM_MODEL", "").strip() or DEFAULT_MODEL}
        numeric = {"GRAVITY_LLM_TIMEOUT": ("timeout", float), "GRAVITY_LLM_MAX_RETRIES": ("max_retries", int),
                   "GRAVITY_LLM_CONCURRENCY": ("concurrency", int), "GRAVITY_LLM_TEMPERATURE": ("temperature", float)}
        for var, (field, kind) in numeric.items():
            raw = env.get(var, "").strip()
            if raw:
                try:
                    values[field] = kind(raw)
                except ValueError:
                    raise ConfigError(f"{var}={raw!r} is not a valid {kind.__name__}") from None
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
            raise ConfigError(f"invalid LLM setting {where}: {first['msg']}") from None

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
                "api_key_set": self.has_key()}
