"""Errors the engine raises for problems a user can fix (bad input, bad configuration).

Every such error says what is wrong and where, in one line, so the CLI and the app can show it
as is instead of a traceback.
"""

from __future__ import annotations


class GravityError(Exception):
    """Base class: a problem the user can act on; ``str(err)`` is the message to show."""


class InputError(GravityError):
    """Input that cannot be read: names the file, the place (line or JSON path) and what was expected."""

    def __init__(self, message: str, *, source: str | None = None, where: str | None = None):
        self.source = source
        self.where = where
        self.detail = message
        prefix = ""
        if source:
            prefix = f"{source}"
            if where:
                prefix += f" ({where})"
            prefix += ": "
        elif where:
            prefix = f"{where}: "
        super().__init__(prefix + message)


class ConfigError(GravityError):
    """A missing or invalid setting (endpoint, model, option)."""


class StoreError(GravityError):
    """An anchor store directory that is missing, incomplete or of an unknown schema version."""


class LLMError(GravityError):
    """An LLM endpoint that failed after retries, or answered with something unusable."""
