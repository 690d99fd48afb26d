"""The LLM client: one OpenAI-compatible endpoint, with retries, structured output, a disk cache and usage counts.

    client = make_client()                       # from GRAVITY_LLM_* / OPENAI_API_KEY
    reply = client.complete_json(PROMPTS["extract_fused"], context)
    text = client.chat(messages, "answer")
"""

from ..errors import ConfigError, LLMError
from .cache import ResponseCache, cache_key
from .client import ConnectionCheck, LLMClient, OpenAIClient, parse_json_reply
from .config import DEFAULT_MODEL, LLMConfig, default_cache_dir, gravity_home
from .guard import ModelRequestsForbidden, allow_local_model_requests, check_model_request
from .tokens import count_tokens
from .usage import PromptUsage, UsageMeter


def make_client(config: LLMConfig | None = None) -> LLMClient:
    """An ``OpenAIClient`` for ``config`` (default: from the environment; ``ConfigError`` if unset)."""
    return OpenAIClient(config or LLMConfig.from_env())


__all__ = [
    "DEFAULT_MODEL", "ConfigError", "ConnectionCheck", "LLMClient", "LLMConfig", "LLMError", "ModelRequestsForbidden",
    "OpenAIClient", "PromptUsage", "ResponseCache", "UsageMeter", "allow_local_model_requests", "cache_key",
    "check_model_request", "count_tokens", "default_cache_dir", "gravity_home", "make_client", "parse_json_reply",
]
