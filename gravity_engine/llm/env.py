"""What the endpoint's configuration and the local model server share: a setting's text read as its type, and the
key sent to a server that asks for none."""

from __future__ import annotations

from ..errors import ConfigError

# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the openai package insists on one.
NO_KEY = "no-key-needed"
_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def parse_setting(name: str, raw: str, kind, sep: str = "=") -> object:
    """One setting's text as its type; ``ConfigError`` names the setting and says what was expected."""
    text = str(raw).strip()
    if kind == "bool":
        if text.lower() not in _BOOLS:
            raise ConfigError(f"{name}{sep}{text!r} is not a yes/no value (use 1/0, true/false, yes/no or on/off)")
        return _BOOLS[text.lower()]
    if kind is str:
        return text
    try:
        return kind(text)
    except ValueError:
        what = "a number" if kind is float else "a whole number"
        raise ConfigError(f"{name}{sep}{text!r} is not {what}") from None
